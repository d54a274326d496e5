-- cancel: pending -> cancelled, with the counters (task-writes.ts cancelTasks). $1 ids, $2
-- nows (one element: the same for all), $3 counter slot. Answers (topic, found) per id in
-- input order: topic when cancelled, found when the id exists.
WITH input AS (SELECT id, coalesce(now, ($2::bigint[])[1]) AS now, ord FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS i(id, now, ord)),
upd AS (
  UPDATE S.tasks t SET state = 'cancelled', due_at = NULL, updated_at = i.now
    FROM input i WHERE t.id = i.id AND t.state = 'pending'
  RETURNING t.id, t.topic
),
changes AS (SELECT $3::smallint AS slot, topic, 'pending'::text AS from_state, 'cancelled'::text AS to_state FROM upd),
-- @include counted
SELECT u.topic, CASE WHEN u.id IS NOT NULL THEN true ELSE (SELECT true FROM S.tasks t WHERE t.id = i.id) IS NOT NULL END AS found
  FROM input i LEFT JOIN upd u ON u.id = i.id
 ORDER BY i.ord
