-- retry: a failed attempt with more to come: task $6, reserved, is pending again to run at
-- $1 with the error $2 at $3 (now), the attempt's entry (outcome $4, error $5) appended to
-- its history. In task-changes.ts's transaction, after task-for-update.
UPDATE S.tasks t SET
-- @include history-append
     , state = 'pending', run_at = $1, due_at = $1, receipt = NULL, reserved_until = NULL, last_error = $2, updated_at = $3
  FROM (SELECT $3::bigint AS now, $4::text AS outcome, $5::text AS error) a
 WHERE t.id = $6
