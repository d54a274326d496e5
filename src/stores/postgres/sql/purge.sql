-- purge: up to $2 completed or cancelled tasks last changed before $1 deleted, with their
-- counters; rows another transaction holds are left for next time. $3 counter slot.
WITH d AS (
  DELETE FROM S.tasks WHERE id IN (
    SELECT id FROM S.tasks WHERE state IN ('completed', 'cancelled') AND updated_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED
  ) RETURNING topic, state
),
changes AS (SELECT $3::smallint AS slot, topic, state AS from_state, NULL::text AS to_state FROM d),
-- @include counted
SELECT count(*)::int AS n FROM d
