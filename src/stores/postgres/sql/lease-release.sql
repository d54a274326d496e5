-- lease-release: shard $1 given up, if still held with token $2.
UPDATE S.shard_leases SET owner = NULL, expires_at = 0 WHERE shard = $1 AND token = $2
