-- schedule-new: new tasks, pending, with their counters (task-writes.ts scheduleTasks). A
-- plain INSERT (ADR 0042): all rows or none; if one id exists the statement fails with
-- unique_violation having changed nothing, and the batch goes again as `schedule`.
-- Parameters: schedule-input's, and $13 the counter slot. Answers (id, seq) per task.
WITH
-- @include schedule-input
,
ins AS (
  INSERT INTO S.tasks (id, topic, state, run_at, due_at, max_attempts, ttr_ms, backoff_base_ms, backoff_factor, backoff_max_ms, backoff_jitter, created_at, url, trace, priority, payload, shard)
  SELECT id, topic, 'pending', run_at, run_at, max_attempts, ttr_ms, base_ms, factor, max_ms, jitter, now, url, trace, priority, payload, shard FROM input ORDER BY ord
  RETURNING id, seq, topic
),
changes AS (SELECT $13::smallint AS slot, topic, NULL::text AS from_state, 'pending'::text AS to_state FROM ins),
-- @include counted
-- Every row went in (or the statement failed): no need to match them with the input.
SELECT id, seq, NULL::bigint AS existing_run_at FROM ins
