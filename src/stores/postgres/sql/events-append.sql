-- events-append: $1 the events' JSON (text[]), in order. The advisory lock, taken before any
-- id is drawn and held until this statement commits, makes ids follow commit order.
WITH turn AS (SELECT pg_advisory_xact_lock(hashtext('delayq.events.{schema}')))
INSERT INTO S.task_events (event)
SELECT e.event FROM turn, unnest($1::text[]) WITH ORDINALITY AS e(event, n) ORDER BY e.n
