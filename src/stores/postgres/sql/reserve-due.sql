-- reserve-due: the due pending tasks of a lane, highest priority first and the oldest
-- within one, reserved, with their counters (ready-reserver.ts): chosen by
-- reserve_pick_ranked (migration 0016, ADR 0057; the walk of priority 0 after the lane's
-- cursor as reserve_pick, 0008, ADR 0045), locked with SKIP LOCKED so that two processes reserving at once take different
-- tasks. $1 topic, $2 now, $3 nonce, $4 ttr (NULL: each task's own), $5 counter slot,
-- $6 how many at most, $7 and $8 the cursor (due time, seq; -1 for the beginning), $9 the
-- push lane. Answers the tasks in (priority desc, due time, seq) order, with the position
-- and priority of each (the cursor moves by those of priority 0 only).
WITH picked AS (
  SELECT id, due_at, seq, priority FROM S.reserve_pick_ranked($1, $9, $2, $6, $7::bigint, $8::bigint)
),
upd AS (
  UPDATE S.tasks t SET
-- @include reservation
    FROM picked p WHERE t.id = p.id AND t.state = 'pending' AND t.run_at <= $2
-- @include reserved-returning
            , t.seq, p.due_at AS picked_due, p.priority AS picked_priority
),
changes AS (SELECT $5::smallint AS slot, topic, 'pending'::text AS from_state, 'reserved'::text AS to_state FROM upd),
-- @include counted
SELECT id, topic, payload, run_at, attempts, max_attempts, receipt, reserved_until, url, trace, picked_due, seq AS picked_seq, picked_priority FROM upd ORDER BY picked_priority DESC, picked_due, seq
