-- reserve: the tasks named, pending and due, reserved, with their counters (task-writes.ts
-- reserveTasks). $1 ids, $2 now, $3 nonce, $4 ttr (NULL: each task's own), $5 counter slot.
-- Answers the reserved tasks in input order.
WITH input AS (SELECT * FROM unnest($1::text[]) WITH ORDINALITY AS i(id, ord)),
upd AS (
  UPDATE S.tasks t SET
-- @include reservation
    FROM input i WHERE t.id = i.id AND t.state = 'pending' AND t.run_at <= $2
-- @include reserved-returning
),
changes AS (SELECT $5::smallint AS slot, topic, 'pending'::text AS from_state, 'reserved'::text AS to_state FROM upd),
-- @include counted
SELECT upd.* FROM upd JOIN input i ON i.id = upd.id ORDER BY i.ord
