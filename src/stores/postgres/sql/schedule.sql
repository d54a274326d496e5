-- schedule: new tasks, pending, with their counters; an id that exists is left as it is
-- and answers its runAt (task-writes.ts scheduleTasks). Parameters: schedule-input's, and
-- $13 the counter slot. Answers (id, seq, existing_run_at) per task in input order: seq
-- NULL for an id that existed, read back by a subquery per such id (an index probe), never
-- by a join with tasks, which the planner makes a hash of the whole table.
WITH
-- @include schedule-input
,
ins AS (
  INSERT INTO S.tasks (id, topic, state, run_at, due_at, max_attempts, ttr_ms, backoff_base_ms, backoff_factor, backoff_max_ms, backoff_jitter, created_at, url, trace, priority, payload, shard)
  SELECT id, topic, 'pending', run_at, run_at, max_attempts, ttr_ms, base_ms, factor, max_ms, jitter, now, url, trace, priority, payload, shard FROM input ORDER BY ord
  ON CONFLICT (id) DO NOTHING
  RETURNING id, seq, topic
),
changes AS (SELECT $13::smallint AS slot, topic, NULL::text AS from_state, 'pending'::text AS to_state FROM ins),
-- @include counted
SELECT i.id, ins.seq, CASE WHEN ins.id IS NULL THEN (SELECT t.run_at FROM S.tasks t WHERE t.id = i.id) END AS existing_run_at
  FROM input i LEFT JOIN ins ON ins.id = i.id
