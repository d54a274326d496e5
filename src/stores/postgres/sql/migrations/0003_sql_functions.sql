-- 0003: scheduling from SQL, for any language, inside the caller's own transaction:
--
--   BEGIN;
--   INSERT INTO orders ...;
--   SELECT delayq.schedule('close-order-42', 'orders.close', '{"order": 42}', now() + interval '30 minutes');
--   COMMIT;
--
-- `schedule` answers true when it created the task, false when the id exists (it is then
-- left as it is); `cancel` answers true when it cancelled a pending task. The task takes
-- the engine's default policy (5 attempts, ttr 30 s, backoff 1 s x2 up to 1 h, 20% jitter).
-- runAt is the timestamp rounded up to the millisecond (never before it); the task's
-- created and updated times are the database's clock, the one place the store's rows take
-- a time that delayq did not pass in.
--
-- A created task's timer goes to the owner of its shard by NOTIFY on the schema's timers
-- channel, which PostgreSQL sends only when the transaction commits: a rolled back
-- schedule leaves neither a row nor a notice. Counters go to slots 256-319 (the backend's
-- pid picks one), apart from the engines' own slots (counters.ts), so an open transaction holding a
-- counter row locks no engine out of it.
--
-- `{schema}` is the schema's name, `S.` its objects (migrations/index.ts).

CREATE FUNCTION S.schedule(id text, topic text, payload jsonb, run_at timestamptz) RETURNS boolean
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  ms bigint;
  now_ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
  new_seq bigint;
  counter smallint := 256 + pg_backend_pid() % 64;
BEGIN
  IF schedule.id IS NULL OR length(schedule.id) > 256 OR schedule.id !~ '^[A-Za-z0-9._:-]+$' THEN
    RAISE EXCEPTION 'delayq.schedule: id must be 1 to 256 characters of [A-Za-z0-9._:-] (got %)', schedule.id USING ERRCODE = '22023';
  END IF;
  IF schedule.topic IS NULL OR length(schedule.topic) > 200 OR schedule.topic !~ '^[A-Za-z0-9._:-]+$' THEN
    RAISE EXCEPTION 'delayq.schedule: topic must be 1 to 200 characters of [A-Za-z0-9._:-] (got %)', schedule.topic USING ERRCODE = '22023';
  END IF;
  IF schedule.run_at IS NULL OR NOT isfinite(schedule.run_at) OR schedule.run_at < 'epoch'::timestamptz THEN
    RAISE EXCEPTION 'delayq.schedule: run_at must be a finite time after 1970 (got %)', schedule.run_at USING ERRCODE = '22023';
  END IF;
  ms := ceil(extract(epoch FROM schedule.run_at) * 1000);
  INSERT INTO S.tasks (id, topic, state, run_at, due_at, attempts, max_attempts, ttr_ms, backoff_base_ms, backoff_factor,
                       backoff_max_ms, backoff_jitter, created_at, updated_at, payload, shard)
  VALUES (schedule.id, schedule.topic, 'pending', ms, ms, 0, 5, 30000, 1000, 2, 3600000, 0.2, now_ms, now_ms,
          coalesce(schedule.payload, 'null'::jsonb)::text, S.shard_of(schedule.id, 16))
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

CREATE FUNCTION S.cancel(id text) RETURNS boolean
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  task_topic text;
  now_ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
  counter smallint := 256 + pg_backend_pid() % 64;
BEGIN
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
