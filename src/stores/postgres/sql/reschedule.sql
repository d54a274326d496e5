-- reschedule: task $3, pending, to run at $1 (now $2). In task-changes.ts's transaction, after task-for-update.
UPDATE S.tasks SET run_at = $1, due_at = $1, updated_at = $2 WHERE id = $3
