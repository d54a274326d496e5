-- heartbeat: process $1 is alive until $3 (now $2); the run-out heartbeats of others go.
-- Its join time (joined_at, migration 0017) is $2 at its first heartbeat, kept after.
-- Answers how many processes are alive, this one included, and how many of the others joined
-- before it (its rank; at the same time, those whose owner id sorts first as bytes, as
-- Redis's heartbeat.lua; no join time, a process of an older delayq: before every other).
-- The statement's snapshot does not see the row `beat` writes, so its own row is counted apart.
WITH beat AS (
  INSERT INTO S.members (owner, expires_at, joined_at) VALUES ($1, $3, $2)
  ON CONFLICT (owner) DO UPDATE SET expires_at = excluded.expires_at RETURNING owner, coalesce(joined_at, -1) AS joined_at
),
gone AS (DELETE FROM S.members WHERE expires_at < $2 AND owner <> $1 RETURNING owner)
SELECT (SELECT count(*) FROM S.members WHERE expires_at >= $2 AND owner <> $1)::int + 1 AS live,
       (SELECT count(*) FROM S.members m, beat b
         WHERE m.expires_at >= $2 AND m.owner <> $1
           AND (coalesce(m.joined_at, -1), m.owner COLLATE "C") < (b.joined_at, b.owner COLLATE "C"))::int AS rank
