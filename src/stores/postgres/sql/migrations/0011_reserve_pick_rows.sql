-- 0011: reserve_pick (0008) estimated at 1 row instead of 64, so that the reserve statement
-- (sql/reserve-due.sql) joins what it picked to `tasks` by probing the primary key whatever
-- the planner's costs (ADR 0053).
--
-- The store's connections set no planner costs for the session any more (no startup
-- parameters, which pgbouncer refuses, and no session state, which transaction pooling
-- loses: docs/postgres.md, "pgbouncer"). With the default random_page_cost of 4.0 and 64
-- rows expected, the planner read a table of 3,000 to 10,000 tasks whole (a hash join over
-- a sequential scan) for every reserve, even of one task; with 1 expected it probes the key
-- for each row picked, as it did with the 1.1 the connections used to start with. A picked
-- row is one of the lane's due tasks, just read by reserve_pick: probing it costs little
-- however many there are.
--
-- A change to the catalog only.

ALTER FUNCTION S.reserve_pick(text, boolean, bigint, integer, bigint, bigint) ROWS 1;
