-- load-due: the scheduler's feed (inspection.ts loadDue), a range scan of tasks_due: the
-- next $4 timers due before $1, after the position ($2 due time, $3 seq; NULL: from the
-- beginning), of the shards $5 (NULL: every shard).
SELECT id, topic, state, due_at, seq, receipt, url FROM S.tasks
 WHERE due_at IS NOT NULL AND due_at < $1 AND ($2::bigint IS NULL OR (due_at, seq) > ($2, $3::bigint))
   AND ($5::smallint[] IS NULL OR shard = ANY($5::smallint[]))
 ORDER BY due_at, seq LIMIT $4
