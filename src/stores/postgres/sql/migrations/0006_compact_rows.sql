-- 0006: a smaller row per task (ADR 0042; docs/postgres.md, "Tables and indexes").
--
-- - `fillfactor` 100 instead of 80: a pending task no longer reserves a fifth of its page
--   for an update that may come hours later. The reserve and ack updates still find room
--   on the page most of the time: pruning, which runs when a page has less than a tenth
--   free, takes the versions earlier updates left behind (measured in the ADR). Pages
--   written before keep the room they had.
-- - `lane` is dropped: reserves match the topic and url instead (now in reserve_pick,
--   0008) where they used the stored copy, which no index held.
-- - `history` is NULL until the first attempt settles (the settling UPDATE appends to
--   coalesce(history, '[]'); rows.ts reads NULL as an empty history): a pending task
--   stores no empty array.
--
-- Each is a change to the catalog only, constant time on a table of any size; rows written
-- before keep their bytes until they are updated or purged.

ALTER TABLE S.tasks SET (fillfactor = 100);

ALTER TABLE S.tasks DROP COLUMN lane;

ALTER TABLE S.tasks ALTER COLUMN history DROP NOT NULL, ALTER COLUMN history DROP DEFAULT;
