-- add-counts: a CounterTally's sums (counters.ts addCounts) added to counter slot $1: $2
-- topics, $3 states, $4 deltas, upserted in (topic, state) order.
INSERT INTO S.task_counts AS c (slot, topic, state, n)
SELECT $1::smallint, topic, state, n FROM unnest($2::text[], $3::text[], $4::bigint[]) AS d(topic, state, n) ORDER BY topic, state
ON CONFLICT (slot, topic, state) DO UPDATE SET n = c.n + excluded.n
