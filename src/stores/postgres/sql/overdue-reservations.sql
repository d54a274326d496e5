-- overdue-reservations: up to $3 reservations of the shards $2 that ran out before $1: their
-- consumers' processes did not expire them (overdue-recoverer.ts).
SELECT id, topic, state, due_at, seq, receipt, url FROM S.tasks
 WHERE due_at IS NOT NULL AND due_at < $1 AND state = 'reserved' AND shard = ANY($2::smallint[])
 ORDER BY due_at, seq LIMIT $3
