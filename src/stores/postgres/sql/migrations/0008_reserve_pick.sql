-- 0008: `reserve_pick`, the choice of a reserve (ready-reserver.ts): the oldest due pending
-- tasks of a lane, locked with SKIP LOCKED, by an ordered walk of `tasks_due` that stops
-- once it has `lim` of them (ADR 0045).
--
-- As a plain statement the planner chose otherwise: it cannot estimate the lane's share of
-- the due range (no statistics on a new or fast-growing table), guesses one row, and then
-- finds a bitmap scan of the whole due range (or a sequential scan) and a sort no dearer
-- than the ordered walk. That reads every due index entry on each call, dead ones included
-- (a bitmap scan never marks them dead, an ordered walk does, once): measured, 5.7 ms per
-- reserve over 130,000 entries after a burst, and 35 ms per reserve during it. The function's
-- SET clauses leave the planner only the ordered walk, whatever the statistics say.
--
-- `push`: the lane is the topic's push lane (tasks with their own url), else the topic's
-- own (core/task/model.ts laneOf).

CREATE FUNCTION S.reserve_pick(lane_topic text, push boolean, now_ms bigint, lim integer, after_due bigint, after_seq bigint)
RETURNS TABLE (id text, due_at bigint, seq bigint)
LANGUAGE sql VOLATILE ROWS 64
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_sort = off
AS $fn$
  SELECT t.id, t.due_at, t.seq FROM S.tasks t
   WHERE t.due_at IS NOT NULL AND t.due_at <= now_ms AND (t.due_at, t.seq) > (after_due, after_seq)
     AND t.state = 'pending' AND t.topic = lane_topic
     AND (CASE WHEN push THEN t.url IS NOT NULL AND t.url <> '' ELSE t.url IS NULL OR t.url = '' END)
   ORDER BY t.due_at, t.seq
   LIMIT lim
   FOR UPDATE SKIP LOCKED
$fn$;
