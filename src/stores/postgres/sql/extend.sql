-- extend: reservations in force get more time (task-writes.ts extendTasks; core/task/decide.ts
-- decideExtend): reserved with the receipt given and not run out by $4 (now); reserved_until
-- and due_at (where the ttr timer is read from) move to now + the request's ttr, or the
-- task's own ttr_ms. The attempt, the receipt and updated_at (the attempt's start) stay.
-- $1 ids, $2 receipts, $3 ttrs (NULL: the task's own), $4 now. Answers (reserved_until,
-- found) per request in input order: reserved_until NULL when nothing changed, then found
-- tells stale from not_found.
WITH input AS (SELECT id, receipt, ttr, ord FROM unnest($1::text[], $2::text[], $3::bigint[]) WITH ORDINALITY AS a(id, receipt, ttr, ord)),
upd AS (
  UPDATE S.tasks t SET reserved_until = $4::bigint + coalesce(a.ttr, coalesce(t.ttr_ms, 30000)), due_at = $4::bigint + coalesce(a.ttr, coalesce(t.ttr_ms, 30000))
    FROM input a WHERE t.id = a.id AND t.state = 'reserved' AND t.receipt = a.receipt AND t.reserved_until > $4::bigint
  RETURNING t.id, t.reserved_until
)
SELECT u.reserved_until, CASE WHEN u.id IS NOT NULL THEN true ELSE (SELECT true FROM S.tasks t WHERE t.id = a.id) END AS found
  FROM input a LEFT JOIN upd u ON u.id = a.id
 ORDER BY a.ord
