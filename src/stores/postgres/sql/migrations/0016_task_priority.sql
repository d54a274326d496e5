-- 0016: a task's priority (ADR 0057): among the due tasks of a lane, higher first, and in
-- (due time, seq) order within one priority; from -100 to 100, 0 by default.
--
-- A column with a constant default, so adding it rewrites no row. Tasks of priority 0 are
-- reserved by the ordered walk of `tasks_due` after the lane's cursor, as before (ADR 0050);
-- the others have an index of their own, `tasks_ranked`, partial on `priority <> 0` and
-- pending, so it holds nothing for a topic without priorities, and the probe of it that
-- starts each reserve costs one descent of an empty range there.
--
-- reserve_pick_ranked replaces reserve_pick (0008, kept for processes of the previous
-- version during an upgrade): the due pending tasks of priority above 0, highest first,
-- then the walk of priority 0 after the cursor, then the priorities below 0; each part only
-- for what the ones before it left of `lim`, each locked with SKIP LOCKED.

ALTER TABLE S.tasks ADD COLUMN priority smallint NOT NULL DEFAULT 0
  CONSTRAINT tasks_priority_range CHECK (priority BETWEEN -100 AND 100);

CREATE INDEX tasks_ranked ON S.tasks (topic, priority DESC, due_at, seq) WHERE priority <> 0 AND state = 'pending';

CREATE FUNCTION S.reserve_pick_ranked(lane_topic text, push boolean, now_ms bigint, lim integer, after_due bigint, after_seq bigint)
RETURNS TABLE (id text, due_at bigint, seq bigint, priority smallint)
LANGUAGE plpgsql VOLATILE ROWS 1
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_sort = off
AS $fn$
DECLARE
  got integer;
  more integer;
BEGIN
  RETURN QUERY
    SELECT t.id, t.due_at, t.seq, t.priority FROM S.tasks t
     WHERE t.topic = lane_topic AND t.priority > 0 AND t.state = 'pending' AND t.due_at <= now_ms
       AND (CASE WHEN push THEN t.url IS NOT NULL AND t.url <> '' ELSE t.url IS NULL OR t.url = '' END)
     ORDER BY t.topic, t.priority DESC, t.due_at, t.seq
     LIMIT lim
     FOR UPDATE SKIP LOCKED;
  GET DIAGNOSTICS got = ROW_COUNT;
  IF got >= lim THEN RETURN; END IF;
  RETURN QUERY
    SELECT t.id, t.due_at, t.seq, t.priority FROM S.tasks t
     WHERE t.due_at IS NOT NULL AND t.due_at <= now_ms AND (t.due_at, t.seq) > (after_due, after_seq)
       AND t.state = 'pending' AND t.topic = lane_topic AND t.priority = 0
       AND (CASE WHEN push THEN t.url IS NOT NULL AND t.url <> '' ELSE t.url IS NULL OR t.url = '' END)
     ORDER BY t.due_at, t.seq
     LIMIT lim - got
     FOR UPDATE SKIP LOCKED;
  GET DIAGNOSTICS more = ROW_COUNT;
  got := got + more;
  IF got >= lim THEN RETURN; END IF;
  RETURN QUERY
    SELECT t.id, t.due_at, t.seq, t.priority FROM S.tasks t
     WHERE t.topic = lane_topic AND t.priority < 0 AND t.state = 'pending' AND t.due_at <= now_ms
       AND (CASE WHEN push THEN t.url IS NOT NULL AND t.url <> '' ELSE t.url IS NULL OR t.url = '' END)
     ORDER BY t.topic, t.priority DESC, t.due_at, t.seq
     LIMIT lim - got
     FOR UPDATE SKIP LOCKED;
END
$fn$;
