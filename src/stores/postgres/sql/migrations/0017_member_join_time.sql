-- 0017: when each live process joined (issue 50): `members.joined_at` is the time of its
-- first heartbeat, kept while it stays alive (heartbeat.sql). The processes rank by it, ties
-- by owner id, and the first (shards mod live) of them hold one shard more than
-- floor(shards / live) (src/coordination/lease-keeper.ts fairShare): a newcomer ranks last,
-- so it never takes a shard from a process that was there before it and is within its share.
--
-- Nullable and without a default, so adding it rewrites no row: a process of the previous
-- version writes no join time during an upgrade, and counts as joined before every other.

ALTER TABLE S.members ADD COLUMN joined_at bigint;
