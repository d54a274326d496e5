-- 0009: a task row stores NULL where its value is the usual one (ADR 0049; docs/postgres.md,
-- "Tables and indexes"): a policy column equal to the usual value, `attempts`
-- before the first reservation (0), `updated_at` until the row is first updated (its
-- `created_at`). A NULL costs one bit of the row's null bitmap instead of 4 or 8 bytes and
-- their alignment: a pending task with the default policy is 56 bytes smaller (190 -> 134
-- bytes of heap, measured in the ADR), and a batch sends and writes less.
--
-- What those NULLs mean, in every schema at version 9 or later, never changes (STORED_DEFAULTS
-- in rows.ts): 0 attempts; 5 attempts at most, ttr 30,000 ms, backoff 1,000 ms x2 up to
-- 3,600,000 ms with 0.2 jitter. Were the engine's defaults to change, tasks would store the
-- new values explicitly. Readers coalesce (sql/includes/); `schedule()` from SQL, which always took this
-- policy, now inserts the NULLs too. Rows written before keep their explicit values, which
-- read the same.
--
-- Changes to the catalog only: constant time on a table of any size.

ALTER TABLE S.tasks
  ALTER COLUMN attempts DROP NOT NULL,
  ALTER COLUMN max_attempts DROP NOT NULL,
  ALTER COLUMN ttr_ms DROP NOT NULL,
  ALTER COLUMN backoff_base_ms DROP NOT NULL,
  ALTER COLUMN backoff_factor DROP NOT NULL,
  ALTER COLUMN backoff_max_ms DROP NOT NULL,
  ALTER COLUMN backoff_jitter DROP NOT NULL,
  ALTER COLUMN updated_at DROP NOT NULL;

CREATE OR REPLACE FUNCTION S.schedule(id text, topic text, payload jsonb, run_at timestamptz) RETURNS boolean
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
  -- The default policy and no attempts yet: the NULLs of migration 0009.
  INSERT INTO S.tasks (id, topic, state, run_at, due_at, created_at, payload, shard)
  VALUES (schedule.id, schedule.topic, 'pending', ms, ms, now_ms, coalesce(schedule.payload, 'null'::jsonb)::text, S.shard_of(schedule.id, 16))
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
