-- quarantine: task $3, a row the engine cannot read (core/task/undecodable.ts), pending or
-- reserved, is dead with the error $1 at $2 (now); the rest of the row is left for a person
-- to mend. In task-changes.ts's transaction, after task-for-update.
UPDATE S.tasks SET state = 'dead', due_at = NULL, receipt = NULL, reserved_until = NULL, last_error = $1, updated_at = $2 WHERE id = $3
