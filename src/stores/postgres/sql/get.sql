-- get: task $1, whole.
SELECT
-- @include task-columns
  FROM S.tasks WHERE id = $1
