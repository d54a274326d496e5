-- reserve-due: the oldest due pending tasks of a lane, reserved, with their counters
-- (ready-reserver.ts): chosen by reserve_pick (migration 0008, ADR 0045) after the lane's
-- cursor, locked with SKIP LOCKED so that two processes reserving at once take different
-- tasks. $1 topic, $2 now, $3 nonce, $4 ttr (NULL: each task's own), $5 counter slot,
-- $6 how many at most, $7 and $8 the cursor (due time, seq; -1 for the beginning), $9 the
-- push lane. Answers the tasks in (due time, seq) order, with the position of each.
WITH picked AS (
  SELECT id, due_at, seq FROM S.reserve_pick($1, $9, $2, $6, $7::bigint, $8::bigint)
),
upd AS (
  UPDATE S.tasks t SET
-- @include reservation
    FROM picked p WHERE t.id = p.id AND t.state = 'pending' AND t.run_at <= $2
-- @include reserved-returning
            , t.seq, p.due_at AS picked_due
),
changes AS (SELECT $5::smallint AS slot, topic, 'pending'::text AS from_state, 'reserved'::text AS to_state FROM upd),
-- @include counted
SELECT id, topic, payload, run_at, attempts, max_attempts, receipt, reserved_until, url, trace, picked_due, seq AS picked_seq FROM upd ORDER BY picked_due, seq
