-- 0002: what several processes on one schema need (docs/postgres.md, "Several processes").
--
-- - `shard`: each task's shard, FNV-1a of its id mod the schema's shard count
--   (src/stores/shared/router.ts), written by the store on insert and by `shard_of` here
--   for rows written before (and for the SQL functions of 0003). The shard count is fixed
--   per schema (meta 'shards').
-- - `lane`: the lane consumers reserve by (laneOf: the topic, or '~push' for a task with its
--   own push url), generated from topic and url so no write can get it wrong.
-- - `shard_leases`: one row per shard: its owner, the fencing token (incremented by every
--   acquisition, so a lease renewed or released with an older token changes nothing) and
--   when it runs out. `members`: the live processes' heartbeats, for the fair share.

CREATE FUNCTION S.shard_of(id text, shards integer) RETURNS smallint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
DECLARE
  h bigint := 2166136261;
BEGIN
  FOR i IN 1 .. length(id) LOOP
    h := ((h # ascii(substr(id, i, 1))) * 16777619) % 4294967296;
  END LOOP;
  RETURN (h % shards)::smallint;
END
$fn$;

INSERT INTO S.meta (key, value) VALUES ('shards', '16');

ALTER TABLE S.tasks
  ADD COLUMN shard smallint NOT NULL DEFAULT 0,
  ADD COLUMN lane text GENERATED ALWAYS AS (CASE WHEN url IS NULL OR url = '' THEN topic ELSE '~push' END) STORED;

UPDATE S.tasks SET shard = S.shard_of(id, 16);

CREATE TABLE S.shard_leases (
  shard      smallint PRIMARY KEY,
  owner      text,
  token      bigint NOT NULL DEFAULT 0,
  expires_at bigint NOT NULL DEFAULT 0
) WITH (fillfactor = 50);

INSERT INTO S.shard_leases (shard) SELECT generate_series(0, 15);

CREATE TABLE S.members (
  owner      text PRIMARY KEY,
  expires_at bigint NOT NULL
) WITH (fillfactor = 50);
