/**
 * 0009: `parked_days`, the parked tasks (park_bucket set: pending, due beyond the parking
 * frontier, not in tasks_due) per topic, UTC day and hour of run_at: one row per (day,
 * topic) with 24 counters h0..h23. The timeline (dueHistogram) then counts the tasks due in
 * the coming days and weeks too, from a few rows instead of a read of every parked row
 * (ADR 0032).
 *
 * A row per day, not per hour: the insert path adds its parked tasks once per transaction
 * (CountDeltas, written with the task counters), and a batch of tasks spread over a month
 * touches ~30 (day, topic) rows instead of ~700 hours. A trigger per parked row cost a
 * fifth of a batch insert (ADR 0032). The rarer ways out of parking (unpark, cancel,
 * reschedule, reserve, delete) are triggers, so no statement can forget them: a row
 * counts while park_bucket is set, under its topic and run_at at that time. The update
 * trigger runs only when park_bucket, run_at or topic is in the SET list, and does nothing
 * unless the row was or is parked. The upgrade fills the table with one scan of `tasks`.
 */
const HOURS = Array.from({ length: 24 }, (_, h) => h);
const COLUMNS = HOURS.map((h) => `h${h}`).join(', ');
/** 1 in the column of `row`'s hour of day, 0 in the others (a comparison is 0 or 1 in SQLite). */
const ONE_HOT = (row: string): string => HOURS.map((h) => `((${row}.run_at / 3600000) % 24 = ${h})`).join(', ');
const ADD_EXCLUDED = HOURS.map((h) => `h${h} = h${h} + excluded.h${h}`).join(', ');
const SUBTRACT = (row: string): string => HOURS.map((h) => `h${h} = h${h} - ((${row}.run_at / 3600000) % 24 = ${h})`).join(', ');
const ALL_ZERO = HOURS.map((h) => `h${h} = 0`).join(' AND ');
const OF_OLD = 'day = OLD.run_at / 86400000 AND topic = OLD.topic';

export const sql = `
CREATE TABLE parked_days (
  day   INTEGER NOT NULL,
  topic TEXT    NOT NULL,
  ${HOURS.map((h) => `h${h} INTEGER NOT NULL DEFAULT 0`).join(',\n  ')},
  PRIMARY KEY (day, topic)
) WITHOUT ROWID;

INSERT INTO parked_days (day, topic, ${COLUMNS})
  SELECT run_at / 86400000, topic, ${HOURS.map((h) => `sum((run_at / 3600000) % 24 = ${h})`).join(', ')}
  FROM tasks WHERE park_bucket IS NOT NULL GROUP BY 1, 2;

CREATE TRIGGER parked_days_update AFTER UPDATE OF park_bucket, run_at, topic ON tasks
  WHEN OLD.park_bucket IS NOT NULL OR NEW.park_bucket IS NOT NULL
BEGIN
  UPDATE parked_days SET ${SUBTRACT('OLD')} WHERE OLD.park_bucket IS NOT NULL AND ${OF_OLD};
  DELETE FROM parked_days WHERE OLD.park_bucket IS NOT NULL AND ${OF_OLD} AND ${ALL_ZERO};
  INSERT INTO parked_days (day, topic, ${COLUMNS}) SELECT NEW.run_at / 86400000, NEW.topic, ${ONE_HOT('NEW')} WHERE NEW.park_bucket IS NOT NULL
    ON CONFLICT (day, topic) DO UPDATE SET ${ADD_EXCLUDED};
END;

CREATE TRIGGER parked_days_delete AFTER DELETE ON tasks WHEN OLD.park_bucket IS NOT NULL
BEGIN
  UPDATE parked_days SET ${SUBTRACT('OLD')} WHERE ${OF_OLD};
  DELETE FROM parked_days WHERE ${OF_OLD} AND ${ALL_ZERO};
END;
`;

/** (day, topic, h0 .. h23): adds a transaction's newly parked tasks (CountDeltas.parked). */
export const ADD_PARKED_DAY = `INSERT INTO parked_days (day, topic, ${COLUMNS}) VALUES (?, ?, ${HOURS.map(() => '?').join(', ')})
  ON CONFLICT (day, topic) DO UPDATE SET ${ADD_EXCLUDED}`;
