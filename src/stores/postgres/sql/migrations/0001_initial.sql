-- 0001: the tables of a delayq schema. `S` stands for the schema's name (quoted where it
-- is substituted; migrations/index.ts).
--
-- Times are epoch milliseconds in bigint columns, as every store keeps them: exact, and
-- compared without time zone conversions. The payload is the JSON text the engine wrote,
-- kept as text: opaque to the store, byte for byte what it was given.
--
-- `due_at` makes the scheduler's feed an index range scan: runAt for a pending task,
-- reservedUntil for a reserved one, NULL once finished, so finished rows are not in the
-- partial index `tasks_due (due_at, seq)` at all. The CHECK keeps that true whatever the
-- code above does.
--
-- Bloat (docs/postgres.md, "Keeping rows from bloating"): a delivery updates a row twice
-- (reserve, ack), and both change `due_at`, which is indexed, so those updates are not HOT;
-- fillfactor 80 still leaves room for the new version on the same page, so an update
-- dirties one heap page instead of two, and PostgreSQL's bottom-up index deletion keeps
-- the version churn out of the indexes. Autovacuum runs on tasks after 2% of its rows
-- changed (the default 20% lets a table of millions bloat by hundreds of thousands of dead
-- rows first). task_counts is a few rows updated by every write: its `n` is not indexed,
-- so its updates are HOT, with half of each page free for them and a vacuum every
-- thousand updates.

CREATE TABLE S.meta (
  key   text PRIMARY KEY,
  value text NOT NULL
);

CREATE SEQUENCE S.task_seq AS bigint;

CREATE TABLE S.tasks (
  id              text COLLATE "C" PRIMARY KEY,
  seq             bigint  NOT NULL DEFAULT nextval('S.task_seq'),
  topic           text    NOT NULL,
  state           text    NOT NULL,
  run_at          bigint  NOT NULL CHECK (run_at >= 0),
  due_at          bigint,
  attempts        integer NOT NULL CHECK (attempts >= 0),
  max_attempts    integer NOT NULL CHECK (max_attempts >= 1),
  ttr_ms          bigint  NOT NULL CHECK (ttr_ms >= 1),
  backoff_base_ms bigint  NOT NULL,
  backoff_factor  float8  NOT NULL,
  backoff_max_ms  bigint  NOT NULL,
  backoff_jitter  float8  NOT NULL,
  created_at      bigint  NOT NULL,
  updated_at      bigint  NOT NULL,
  receipt         text,
  acked_receipt   text,
  reserved_until  bigint,
  last_error      text,
  url             text,
  payload         text    NOT NULL,
  CHECK (
    (state = 'pending' AND receipt IS NULL AND due_at = run_at)
    OR (state = 'reserved' AND receipt IS NOT NULL AND due_at = reserved_until)
    OR (state IN ('completed', 'dead', 'cancelled') AND due_at IS NULL AND receipt IS NULL)
  )
) WITH (
  fillfactor = 80,
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.02,
  autovacuum_vacuum_insert_scale_factor = 0.05
);

ALTER SEQUENCE S.task_seq OWNED BY S.tasks.seq;

CREATE INDEX tasks_due ON S.tasks (due_at, seq) WHERE due_at IS NOT NULL;

CREATE INDEX tasks_finished ON S.tasks (updated_at) WHERE state IN ('completed', 'cancelled');

CREATE INDEX tasks_dead ON S.tasks (id) WHERE state = 'dead';

CREATE TABLE S.task_counts (
  slot  smallint NOT NULL,
  topic text     NOT NULL,
  state text     NOT NULL,
  n     bigint   NOT NULL,
  PRIMARY KEY (slot, topic, state)
) WITH (
  fillfactor = 50,
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_threshold = 1000
);

CREATE TABLE S.push_subscriptions (
  topic        text PRIMARY KEY,
  subscription text   NOT NULL,
  updated_at   bigint NOT NULL
);

CREATE TABLE S.schedules (
  id         text COLLATE "C" PRIMARY KEY,
  schedule   text   NOT NULL,
  updated_at bigint NOT NULL
);

INSERT INTO S.meta (key, value) VALUES ('schedules_version', '0');
