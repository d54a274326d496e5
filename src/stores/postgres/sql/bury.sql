-- bury: a failed attempt with none left: task $5, reserved, is dead with the error $1 at $2
-- (now), the attempt's entry (outcome $3, error $4) appended to its history. In
-- task-changes.ts's transaction, after task-for-update.
UPDATE S.tasks t SET
-- @include history-append
     , state = 'dead', due_at = NULL, receipt = NULL, reserved_until = NULL, last_error = $1, updated_at = $2
  FROM (SELECT $2::bigint AS now, $3::text AS outcome, $4::text AS error) a
 WHERE t.id = $5
