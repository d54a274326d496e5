-- retry-dead: task $3, dead, pending again at $1 with no attempts (now $2). In task-changes.ts's transaction.
UPDATE S.tasks SET state = 'pending', attempts = 0, run_at = $1, due_at = $1, updated_at = $2 WHERE id = $3
