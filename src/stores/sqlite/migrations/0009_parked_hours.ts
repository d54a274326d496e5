/**
 * 0009: `parked_hours`, the number of parked tasks (park_bucket set: pending, due beyond
 * the parking frontier, not in tasks_due) per topic and hour of run_at, so the timeline
 * (dueHistogram) counts the tasks due in the coming days and weeks too, in
 * O(hours x topics) instead of a read of every parked row (ADR 0032).
 *
 * Triggers keep it, so no statement that parks, unparks, moves or ends a task can forget
 * it: a row counts while park_bucket is set, under its topic and run_at at that time. The
 * insert trigger fires only for parked rows; the update trigger only when park_bucket,
 * run_at or topic is in the SET list, and does nothing unless the row was or is parked.
 * The backfill reads an existing file once, a scan of tasks (the parked rows have no
 * index of their own since 0003): seconds for millions of rows, once.
 */
export const sql = `
CREATE TABLE parked_hours (
  hour  INTEGER NOT NULL,
  topic TEXT    NOT NULL,
  n     INTEGER NOT NULL,
  PRIMARY KEY (hour, topic)
) WITHOUT ROWID;

INSERT INTO parked_hours (hour, topic, n)
  SELECT run_at / 3600000, topic, count(*) FROM tasks WHERE park_bucket IS NOT NULL GROUP BY 1, 2;

CREATE TRIGGER parked_hours_insert AFTER INSERT ON tasks WHEN NEW.park_bucket IS NOT NULL
BEGIN
  INSERT INTO parked_hours (hour, topic, n) VALUES (NEW.run_at / 3600000, NEW.topic, 1)
    ON CONFLICT (hour, topic) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER parked_hours_update AFTER UPDATE OF park_bucket, run_at, topic ON tasks
  WHEN OLD.park_bucket IS NOT NULL OR NEW.park_bucket IS NOT NULL
BEGIN
  UPDATE parked_hours SET n = n - 1 WHERE OLD.park_bucket IS NOT NULL AND hour = OLD.run_at / 3600000 AND topic = OLD.topic;
  DELETE FROM parked_hours WHERE OLD.park_bucket IS NOT NULL AND hour = OLD.run_at / 3600000 AND topic = OLD.topic AND n <= 0;
  INSERT INTO parked_hours (hour, topic, n) SELECT NEW.run_at / 3600000, NEW.topic, 1 WHERE NEW.park_bucket IS NOT NULL
    ON CONFLICT (hour, topic) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER parked_hours_delete AFTER DELETE ON tasks WHEN OLD.park_bucket IS NOT NULL
BEGIN
  UPDATE parked_hours SET n = n - 1 WHERE hour = OLD.run_at / 3600000 AND topic = OLD.topic;
  DELETE FROM parked_hours WHERE hour = OLD.run_at / 3600000 AND topic = OLD.topic AND n <= 0;
END;
`;
