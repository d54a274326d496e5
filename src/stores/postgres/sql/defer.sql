-- defer: task $4, reserved, back to pending at $2 with $1 attempts (the deferred one not
-- counted) at $3 (now). In task-changes.ts's transaction, after task-for-update.
UPDATE S.tasks SET state = 'pending', attempts = $1, run_at = $2, due_at = $2, receipt = NULL, reserved_until = NULL, updated_at = $3 WHERE id = $4
