-- task-columns: a whole task as the store reads it (shared/task-rows.ts TASK_COLUMNS).
id, created_at, coalesce(updated_at, created_at) AS updated_at, last_error, payload, trace, priority, history,
-- @include control-columns
