/**
 * 0001: the task table, its indexes and the per-(topic, state) counters.
 *
 * Column order matters: SQLite reads a row's columns front to back, and a large payload
 * spills into overflow pages, so the payload goes last and the control columns that
 * reserve / ack / loadDue read never touch those pages.
 *
 * `due_at` is what makes the scheduler's feed an index range scan: it is runAt for a
 * pending task, reservedUntil for a reserved one and NULL once the task is finished, so
 * finished rows (the bulk of an old database) are not in the partial index at all.
 *
 * `park_bucket` keeps far-future tasks out of that index (see parking.ts): a pending task
 * due in a later ~18.6 h bucket is filed by (park_bucket, seq) instead, where new rows
 * land at the end of their bucket, and is moved to tasks_due before its bucket comes near.
 * The CHECK keeps both invariants true whatever the code above does.
 */
export const sql = `
CREATE TABLE tasks (
  seq             INTEGER PRIMARY KEY,
  id              TEXT    NOT NULL UNIQUE,
  topic           TEXT    NOT NULL,
  state           TEXT    NOT NULL CHECK (state IN ('pending', 'reserved', 'completed', 'dead', 'cancelled')),
  run_at          INTEGER NOT NULL CHECK (run_at >= 0),
  due_at          INTEGER,
  park_bucket     INTEGER,
  attempts        INTEGER NOT NULL CHECK (attempts >= 0),
  max_attempts    INTEGER NOT NULL CHECK (max_attempts >= 1),
  ttr_ms          INTEGER NOT NULL CHECK (ttr_ms >= 1),
  backoff_base_ms INTEGER NOT NULL,
  backoff_factor  REAL    NOT NULL,
  backoff_max_ms  INTEGER NOT NULL,
  backoff_jitter  REAL    NOT NULL,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  receipt         TEXT,
  reserved_until  INTEGER,
  last_error      TEXT,
  payload         TEXT    NOT NULL,
  CHECK (
    (state = 'pending' AND receipt IS NULL
      AND ((due_at = run_at AND park_bucket IS NULL) OR (due_at IS NULL AND park_bucket IS NOT NULL)))
    OR (state = 'reserved' AND due_at = reserved_until AND park_bucket IS NULL AND receipt IS NOT NULL)
    OR (state IN ('completed', 'dead', 'cancelled') AND due_at IS NULL AND park_bucket IS NULL AND receipt IS NULL)
  )
);

CREATE INDEX tasks_due ON tasks (due_at, seq) WHERE due_at IS NOT NULL;

CREATE INDEX tasks_parked ON tasks (park_bucket, seq) WHERE park_bucket IS NOT NULL;

CREATE INDEX tasks_finished ON tasks (updated_at) WHERE state IN ('completed', 'cancelled');

CREATE TABLE task_counts (
  topic TEXT    NOT NULL,
  state TEXT    NOT NULL,
  n     INTEGER NOT NULL,
  PRIMARY KEY (topic, state)
) WITHOUT ROWID;
`;
