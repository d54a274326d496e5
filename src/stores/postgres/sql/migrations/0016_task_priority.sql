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
--
-- The SQL API's schedule() (0010) takes a `priority` (NULL: 0) as its last argument. A new
-- argument is a new function: the old one is dropped (an overload with a default would make
-- every existing call ambiguous), and the roles that could execute it may execute the new
-- one (a GRANT EXECUTE ON ALL FUNCTIONS given before this migration would not reach it).

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

REVOKE EXECUTE ON FUNCTION S.reserve_pick_ranked(text, boolean, bigint, integer, bigint, bigint) FROM PUBLIC;

CREATE TEMPORARY TABLE delayq_schedule_grantees ON COMMIT DROP AS
  SELECT DISTINCT p.grantee::regrole::text AS grantee
    FROM pg_proc f, aclexplode(f.proacl) p
   WHERE f.oid = 'S.schedule(text, text, jsonb, timestamptz, integer, bigint, bigint, double precision, bigint, double precision)'::regprocedure
     AND p.privilege_type = 'EXECUTE' AND p.grantee <> 0 AND p.grantee <> f.proowner;

DROP FUNCTION S.schedule(text, text, jsonb, timestamptz, integer, bigint, bigint, double precision, bigint, double precision);

CREATE FUNCTION S.schedule(id text, topic text, payload jsonb, run_at timestamptz,
                           max_attempts integer DEFAULT NULL, ttr_ms bigint DEFAULT NULL,
                           backoff_base_ms bigint DEFAULT NULL, backoff_factor double precision DEFAULT NULL,
                           backoff_max_ms bigint DEFAULT NULL, backoff_jitter double precision DEFAULT NULL,
                           priority integer DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
#variable_conflict use_column
DECLARE
  ms bigint;
  stored text;
  base bigint := coalesce(schedule.backoff_base_ms, 1000);
  factor double precision := coalesce(schedule.backoff_factor, 2);
  most bigint := coalesce(schedule.backoff_max_ms, 3600000);
  jitter double precision := coalesce(schedule.backoff_jitter, 0.2);
  now_ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
  new_seq bigint;
  counter smallint := 256 + pg_backend_pid() % 64;
BEGIN
  PERFORM S.check_name('topic', schedule.topic, 200, 'INVALID_TOPIC');
  PERFORM S.check_name('id', schedule.id, 256, 'INVALID_ID');
  ms := S.run_at_ms(schedule.run_at);
  IF schedule.ttr_ms IS NOT NULL AND (schedule.ttr_ms < 1 OR schedule.ttr_ms > 86400000) THEN
    RAISE EXCEPTION 'delayq: ttr_ms: must be an integer from 1 to 86400000 (got %)', schedule.ttr_ms USING ERRCODE = '22023', DETAIL = 'INVALID_OPTION';
  END IF;
  IF schedule.max_attempts IS NOT NULL AND (schedule.max_attempts < 1 OR schedule.max_attempts > 1000) THEN
    RAISE EXCEPTION 'delayq: max_attempts: must be an integer from 1 to 1000 (got %)', schedule.max_attempts USING ERRCODE = '22023', DETAIL = 'INVALID_OPTION';
  END IF;
  IF base < 0 THEN
    RAISE EXCEPTION 'delayq: backoff_base_ms: must be an integer >= 0 (got %)', base USING ERRCODE = '22023', DETAIL = 'INVALID_OPTION';
  END IF;
  -- NaN compares above every number in PostgreSQL: the upper bounds refuse it.
  IF NOT (factor >= 1 AND factor <= 100) THEN
    RAISE EXCEPTION 'delayq: backoff_factor: must be a number from 1 to 100 (got %)', factor USING ERRCODE = '22023', DETAIL = 'INVALID_OPTION';
  END IF;
  IF most < base THEN
    RAISE EXCEPTION 'delayq: backoff_max_ms: must be an integer >= backoff_base_ms (got %)', most USING ERRCODE = '22023', DETAIL = 'INVALID_OPTION';
  END IF;
  IF NOT (jitter >= 0 AND jitter <= 1) THEN
    RAISE EXCEPTION 'delayq: backoff_jitter: must be a number from 0 to 1 (got %)', jitter USING ERRCODE = '22023', DETAIL = 'INVALID_OPTION';
  END IF;
  IF schedule.priority IS NOT NULL AND (schedule.priority < -100 OR schedule.priority > 100) THEN
    RAISE EXCEPTION 'delayq: priority: must be an integer from -100 to 100 (got %)', schedule.priority USING ERRCODE = '22023', DETAIL = 'INVALID_OPTION';
  END IF;
  stored := S.payload_text(schedule.payload);
  -- The usual policy and no attempts yet are NULLs (migration 0009).
  INSERT INTO S.tasks (id, topic, state, run_at, due_at, max_attempts, ttr_ms, backoff_base_ms, backoff_factor, backoff_max_ms, backoff_jitter,
                       created_at, payload, shard, priority)
  VALUES (schedule.id, schedule.topic, 'pending', ms, ms, nullif(schedule.max_attempts, 5), nullif(schedule.ttr_ms, 30000), nullif(base, 1000),
          nullif(factor, 2), nullif(most, 3600000), nullif(jitter, 0.2), now_ms, stored, S.shard_of(schedule.id, 16), coalesce(schedule.priority, 0))
  ON CONFLICT (id) DO NOTHING
  RETURNING seq INTO new_seq;
  IF new_seq IS NULL THEN
    RETURN false;
  END IF;
  INSERT INTO S.task_counts AS c (slot, topic, state, n) VALUES (counter, schedule.topic, 'pending', 1)
  ON CONFLICT (slot, topic, state) DO UPDATE SET n = c.n + 1;
  PERFORM pg_notify('delayq:{schema}:timers', schedule.id || ' ' || schedule.topic || ' ' || ms || ' ' || new_seq);
  RETURN true;
END
$fn$;

REVOKE EXECUTE ON FUNCTION S.schedule(text, text, jsonb, timestamptz, integer, bigint, bigint, double precision, bigint, double precision, integer) FROM PUBLIC;

DO $grants$
DECLARE
  role_name text;
BEGIN
  FOR role_name IN SELECT grantee FROM delayq_schedule_grantees LOOP
    EXECUTE format('GRANT EXECUTE ON FUNCTION S.schedule(text, text, jsonb, timestamptz, integer, bigint, bigint, double precision, bigint, double precision, integer) TO %s', role_name);
  END LOOP;
END
$grants$;
