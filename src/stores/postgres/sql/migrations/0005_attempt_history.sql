-- 0005: each task keeps its last attempts (core/task/history.ts, ADR 0041) in `history`, a
-- jsonb array of [attempt, startedAt, durationMs, outcome, error] arrays, oldest first, at
-- most HISTORY_LIMIT (10). The ack, retry and bury statements append to it in the same
-- UPDATE that settles the attempt (sql/includes/history-append.sql).
--
-- ADD COLUMN with a constant default: a change to the catalog only (PostgreSQL 11+), constant
-- time on a table of any size; rows written before it read the default, an empty history.

ALTER TABLE S.tasks ADD COLUMN history jsonb NOT NULL DEFAULT '[]'::jsonb;
