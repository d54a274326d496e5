-- lease-acquire: shard $1 taken by $2 at $3 for $4 ms if free or run out; the fencing token
-- moves on. Answers the new token, or nothing.
UPDATE S.shard_leases SET owner = $2, token = token + 1, expires_at = $3::bigint + $4::bigint
 WHERE shard = $1 AND (owner IS NULL OR expires_at <= $3) RETURNING token
