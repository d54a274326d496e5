-- 0015: `task_events`, the lifecycle events' log of every process on the schema (issue 49,
-- event-log.ts): one row per event, its JSON in `event`, numbered by `id` in the order the
-- rows were written (the appends take one advisory lock, so ids are given in commit order
-- and a reader that has seen id n never sees a row below n appear later). Trimmed to the
-- newest rows by the appending processes.

CREATE TABLE S.task_events (
  id bigserial PRIMARY KEY,
  event text NOT NULL
);
