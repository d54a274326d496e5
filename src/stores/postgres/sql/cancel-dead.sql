-- cancel-dead: task $2, dead, cancelled at $1 (now). In task-changes.ts's transaction.
UPDATE S.tasks SET state = 'cancelled', updated_at = $1 WHERE id = $2
