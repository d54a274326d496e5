-- purge-topic: one step of a topic purge (task-writes.ts purgeTopicStep): the next $2 ids
-- after $1 in id order are looked at, and those of topic $3 in state $4 (completed includes
-- cancelled) deleted, at most $5, with their counters ($6 counter slot). Answers the deleted
-- rows (or one row of NULLs), each with the last id looked at and how many were.
WITH scan AS (SELECT id FROM S.tasks WHERE id > $1 ORDER BY id LIMIT $2),
cand AS (
  SELECT t.id FROM S.tasks t JOIN scan USING (id)
   WHERE t.topic = $3 AND (t.state = $4 OR ($4 = 'completed' AND t.state = 'cancelled'))
   ORDER BY t.id LIMIT $5 FOR UPDATE
),
d AS (DELETE FROM S.tasks WHERE id IN (SELECT id FROM cand) RETURNING id, topic, state, run_at, seq, url),
changes AS (SELECT $6::smallint AS slot, topic, state AS from_state, NULL::text AS to_state FROM d),
-- @include counted
SELECT d.id, d.topic, d.state, d.run_at, d.seq, d.url, (SELECT max(id) FROM scan) AS last, (SELECT count(*)::int FROM scan) AS scanned
  FROM (SELECT 1) one LEFT JOIN d ON true ORDER BY d.id
