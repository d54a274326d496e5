-- 0014: `due_floor`, where a lane's safety net starts (ready-reserver.ts, ADR 0055): the
-- position of the first pending task of a lane due by `now_ms` after a position, read without
-- locking, by the same ordered walk of `tasks_due` as reserve_pick (0008), the same planner
-- settings and for the same reason.
--
-- Not locking is the point: a task another statement holds locked (a reserve in flight that
-- may fail, a process that died mid-statement, a transaction that will roll back) is still
-- pending in this statement's snapshot, so the position answered is at or before it. A lane's
-- reserves skip such a task (SKIP LOCKED) and move on; the next walk of the safety net starts
-- just before the position answered here, not from the beginning of `tasks_due`, whose first
-- entries, while the xmin horizon is held, are every version left behind since then.

CREATE FUNCTION S.due_floor(lane_topic text, push boolean, now_ms bigint, after_due bigint, after_seq bigint)
RETURNS TABLE (due_at bigint, seq bigint)
LANGUAGE sql STABLE ROWS 1
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_sort = off
AS $fn$
  SELECT t.due_at, t.seq FROM S.tasks t
   WHERE t.due_at IS NOT NULL AND t.due_at <= now_ms AND (t.due_at, t.seq) > (after_due, after_seq)
     AND t.state = 'pending' AND t.topic = lane_topic
     AND (CASE WHEN push THEN t.url IS NOT NULL AND t.url <> '' ELSE t.url IS NULL OR t.url = '' END)
   ORDER BY t.due_at, t.seq
   LIMIT 1
$fn$;

REVOKE EXECUTE ON FUNCTION S.due_floor(text, boolean, bigint, bigint, bigint) FROM PUBLIC;
