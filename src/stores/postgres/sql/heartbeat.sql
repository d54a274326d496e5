-- heartbeat: process $1 is alive until $3 (now $2); the run-out heartbeats of others go.
-- Answers how many processes are alive, this one included (lease-backend.ts).
WITH beat AS (
  INSERT INTO S.members (owner, expires_at) VALUES ($1, $3)
  ON CONFLICT (owner) DO UPDATE SET expires_at = excluded.expires_at RETURNING owner
),
gone AS (DELETE FROM S.members WHERE expires_at < $2 AND owner <> $1 RETURNING owner)
SELECT (SELECT count(*) FROM S.members WHERE expires_at >= $2 AND owner <> $1)::int + 1 AS live
