-- task-for-update: the control columns of task $1, locked until the transaction ends, so no
-- concurrent change slips between this read and the write decided from it (task-changes.ts).
SELECT
-- @include control-columns
  FROM S.tasks WHERE id = $1 FOR UPDATE
