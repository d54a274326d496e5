-- ack: reserved -> completed with the current receipt, the attempt's entry appended to the
-- history (outcome 'acked') in the same UPDATE, with the counters (task-writes.ts ackTasks).
-- The receipt moves to acked_receipt, so the same ack sent again answers already_acked.
-- $1 ids, $2 receipts, $3 nows (one element: the same for all), $4 counter slot. Answers
-- (outcome, topic) per ack in input order.
WITH input AS (
  SELECT id, receipt, coalesce(now, ($3::bigint[])[1]) AS now, 'acked'::text AS outcome, NULL::text AS error, ord
    FROM unnest($1::text[], $2::text[], $3::bigint[]) WITH ORDINALITY AS a(id, receipt, now, ord)
),
upd AS (
  UPDATE S.tasks t SET
-- @include history-append
        , state = 'completed', due_at = NULL, acked_receipt = t.receipt, receipt = NULL, reserved_until = NULL, updated_at = a.now
    FROM input a WHERE t.id = a.id AND t.state = 'reserved' AND t.receipt = a.receipt
  RETURNING t.id, t.topic, t.acked_receipt
),
changes AS (SELECT $4::smallint AS slot, topic, 'reserved'::text AS from_state, 'completed'::text AS to_state FROM upd),
-- @include counted
SELECT CASE WHEN u.id IS NOT NULL THEN 'acked'
            ELSE coalesce((SELECT CASE WHEN t.state = 'completed' AND t.acked_receipt = a.receipt THEN 'already_acked' ELSE 'stale' END
                             FROM S.tasks t WHERE t.id = a.id), 'not_found') END AS outcome, u.topic
  FROM input a LEFT JOIN upd u ON u.id = a.id AND u.acked_receipt = a.receipt
 ORDER BY a.ord
