-- lease-renew: shard $1's lease, held with token $2 and not run out at $3, extended $4 ms from then.
UPDATE S.shard_leases SET expires_at = $3::bigint + $4::bigint
 WHERE shard = $1 AND token = $2 AND owner IS NOT NULL AND expires_at > $3 RETURNING shard
