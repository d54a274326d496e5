-- 0010: the SQL API an application role uses with EXECUTE alone (docs/postgres.md, "The SQL
-- API"), inside its own transactions, for any language:
--
--   GRANT USAGE ON SCHEMA delayq TO app;
--   GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA delayq TO app;
--
--   SELECT delayq.schedule('close-order-42', 'orders.close', '{"order": 42}', now() + interval '30 minutes',
--                          max_attempts => 3, ttr_ms => 60000);
--   SELECT delayq.reschedule('conn-7', now() + interval '30 seconds');
--   SELECT delayq.cancel('close-order-42');
--
-- - `schedule`, `reschedule` and `cancel` are SECURITY DEFINER: they run as the schema's
--   owner (the role that migrated it), so the caller needs no right on any table, and it
--   gets none: it cannot read a payload, move a task's time but through `reschedule`, or
--   write a row delayq could not read. Their search_path is pinned (pg_catalog, then pg_temp)
--   and every object they name is qualified, so nothing the caller puts on its own path runs
--   in their place.
-- - EXECUTE on every function of the schema is revoked from PUBLIC: a role calls them only
--   once granted. The helpers (shard_of, reserve_pick, flow_admit, flow_bind and the checks
--   below) stay SECURITY INVOKER: granted them, an application role changes nothing with
--   them, since it may not touch the tables they work on.
-- - They check what the library checks (core/task/validate.ts, payload.ts; a test holds them
--   to it): ids and topics of 1 to 256 and 200 characters of [A-Za-z0-9._:-], neither "."
--   nor ".."; a payload of at most 1 MiB (1,048,576 bytes of the JSON text stored) and 128
--   levels of objects and arrays, without a `__proto__` key or a `constructor` holding a
--   `prototype`; a runAt from 1970 to 10 years ahead (315,576,000,000 ms); max_attempts 1 to
--   1,000, ttr_ms 1 to 86,400,000, a backoff with base >= 0, factor 1 to 100, max >= base and
--   jitter 0 to 1. A refusal raises SQLSTATE 22023 (invalid_parameter_value) with the
--   library's error code as its DETAIL (INVALID_ID, PAYLOAD_TOO_LARGE, ...), and aborts the
--   caller's transaction as any error does.
-- - A policy value left out, or equal to the usual one, is stored as NULL (migration 0009).
--
-- `schedule` (a new signature: the old one is dropped) answers true when it created the
-- task, false when the id exists (left as it is); `reschedule` true when a pending task now
-- runs at the new time; `cancel` true when a pending task was cancelled. Times are the
-- database's clock; runAt is rounded up to the millisecond, never before it. Each sends the
-- timer to the owner of the task's shard on the timers channel, which PostgreSQL delivers
-- only if the transaction commits (0003).

DROP FUNCTION S.schedule(text, text, jsonb, timestamptz);

CREATE FUNCTION S.check_name(field text, value text, max_length integer, code text) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
  IF value IS NULL OR value = '' THEN
    RAISE EXCEPTION 'delayq: %: must be a non-empty string (got %)', field, coalesce(quote_literal(value), 'NULL') USING ERRCODE = '22023', DETAIL = code;
  END IF;
  IF length(value) > max_length THEN
    RAISE EXCEPTION 'delayq: %: must be at most % characters (got %)', field, max_length, length(value) USING ERRCODE = '22023', DETAIL = code;
  END IF;
  IF value !~ '^[A-Za-z0-9._:-]+$' THEN
    RAISE EXCEPTION 'delayq: %: may contain only A-Z a-z 0-9 . _ : - (got %)', field, quote_literal(left(value, 64)) USING ERRCODE = '22023', DETAIL = code;
  END IF;
  IF value IN ('.', '..') THEN
    RAISE EXCEPTION 'delayq: %: must not be "." or ".." (a URL path would resolve them away)', field USING ERRCODE = '22023', DETAIL = code;
  END IF;
  RETURN value;
END
$fn$;

CREATE FUNCTION S.run_at_ms(run_at timestamptz) RETURNS bigint
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  ms bigint;
  now_ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
BEGIN
  IF run_at IS NULL OR NOT isfinite(run_at) THEN
    RAISE EXCEPTION 'delayq: run_at: must be a finite time (got %)', coalesce(run_at::text, 'NULL') USING ERRCODE = '22023', DETAIL = 'INVALID_DELAY';
  END IF;
  ms := ceil(extract(epoch FROM run_at) * 1000);
  IF ms < 0 THEN
    RAISE EXCEPTION 'delayq: run_at: must not be before 1970 (got %)', run_at USING ERRCODE = '22023', DETAIL = 'INVALID_DELAY';
  END IF;
  IF ms - now_ms > 315576000000 THEN
    RAISE EXCEPTION 'delayq: run_at: must be at most 315576000000 ms from now (got %)', run_at USING ERRCODE = '22023', DETAIL = 'INVALID_DELAY';
  END IF;
  RETURN ms;
END
$fn$;

CREATE FUNCTION S.payload_text(payload jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  stored text := coalesce(payload, 'null'::jsonb)::text;
BEGIN
  IF jsonb_path_exists(payload, 'strict $.**{128 to last} ? (@.type() == "object" || @.type() == "array")') THEN
    RAISE EXCEPTION 'delayq: payload: nested deeper than 128 levels of objects and arrays' USING ERRCODE = '22023', DETAIL = 'PAYLOAD_TOO_DEEP';
  END IF;
  IF jsonb_path_exists(payload, 'strict $.** ? (@.type() == "object" && exists(@."__proto__"))', '{}', true) THEN
    RAISE EXCEPTION 'delayq: payload: the key "__proto__" is not allowed (it can pollute prototypes where the payload is parsed)' USING ERRCODE = '22023', DETAIL = 'INVALID_ARGUMENT';
  END IF;
  IF jsonb_path_exists(payload, 'strict $.** ? (@.type() == "object" && @."constructor".type() == "object" && exists(@."constructor"."prototype"))', '{}', true) THEN
    RAISE EXCEPTION 'delayq: payload: the key "constructor.prototype" is not allowed (it can pollute prototypes where the payload is parsed)' USING ERRCODE = '22023', DETAIL = 'INVALID_ARGUMENT';
  END IF;
  IF octet_length(stored) > 1048576 THEN
    RAISE EXCEPTION 'delayq: payload: serialised size exceeds 1048576 bytes (got %)', octet_length(stored) USING ERRCODE = '22023', DETAIL = 'PAYLOAD_TOO_LARGE';
  END IF;
  RETURN stored;
END
$fn$;

CREATE FUNCTION S.schedule(id text, topic text, payload jsonb, run_at timestamptz,
                           max_attempts integer DEFAULT NULL, ttr_ms bigint DEFAULT NULL,
                           backoff_base_ms bigint DEFAULT NULL, backoff_factor double precision DEFAULT NULL,
                           backoff_max_ms bigint DEFAULT NULL, backoff_jitter double precision DEFAULT NULL)
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
  stored := S.payload_text(schedule.payload);
  -- The usual policy and no attempts yet are NULLs (migration 0009).
  INSERT INTO S.tasks (id, topic, state, run_at, due_at, max_attempts, ttr_ms, backoff_base_ms, backoff_factor, backoff_max_ms, backoff_jitter,
                       created_at, payload, shard)
  VALUES (schedule.id, schedule.topic, 'pending', ms, ms, nullif(schedule.max_attempts, 5), nullif(schedule.ttr_ms, 30000), nullif(base, 1000),
          nullif(factor, 2), nullif(most, 3600000), nullif(jitter, 0.2), now_ms, stored, S.shard_of(schedule.id, 16))
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

CREATE FUNCTION S.reschedule(id text, run_at timestamptz) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
#variable_conflict use_column
DECLARE
  ms bigint;
  now_ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
  task_topic text;
  task_url text;
  task_seq bigint;
BEGIN
  PERFORM S.check_name('id', reschedule.id, 256, 'INVALID_ID');
  ms := S.run_at_ms(reschedule.run_at);
  UPDATE S.tasks SET run_at = ms, due_at = ms, updated_at = now_ms
   WHERE id = reschedule.id AND state = 'pending'
  RETURNING topic, url, seq INTO task_topic, task_url, task_seq;
  IF task_topic IS NULL THEN
    RETURN false;
  END IF;
  -- The timer line names the task's lane: its topic, or its topic's push lane (core/task/model.ts laneOf).
  PERFORM pg_notify('delayq:{schema}:timers', reschedule.id || ' ' || CASE WHEN task_url IS NULL OR task_url = '' THEN task_topic ELSE '~push:' || task_topic END
                    || ' ' || ms || ' ' || task_seq);
  RETURN true;
END
$fn$;

CREATE OR REPLACE FUNCTION S.cancel(id text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
#variable_conflict use_column
DECLARE
  task_topic text;
  now_ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
  counter smallint := 256 + pg_backend_pid() % 64;
BEGIN
  PERFORM S.check_name('id', cancel.id, 256, 'INVALID_ID');
  UPDATE S.tasks SET state = 'cancelled', due_at = NULL, updated_at = now_ms
   WHERE id = cancel.id AND state = 'pending'
  RETURNING topic INTO task_topic;
  IF task_topic IS NULL THEN
    RETURN false;
  END IF;
  INSERT INTO S.task_counts AS c (slot, topic, state, n) VALUES (counter, task_topic, 'cancelled', 1), (counter, task_topic, 'pending', -1)
  ON CONFLICT (slot, topic, state) DO UPDATE SET n = c.n + excluded.n;
  RETURN true;
END
$fn$;

COMMENT ON FUNCTION S.schedule(text, text, jsonb, timestamptz, integer, bigint, bigint, double precision, bigint, double precision) IS
  'delayq: a task created inside the caller''s transaction; true if created, false if the id exists. docs/postgres.md, "The SQL API".';
COMMENT ON FUNCTION S.reschedule(text, timestamptz) IS 'delayq: a pending task moved to run at run_at; true if it was pending.';
COMMENT ON FUNCTION S.cancel(text) IS 'delayq: a pending task cancelled; true if it was pending.';

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA "{schema}" FROM PUBLIC;
