-- flow-admit: an admission of topic $1 (migration 0007's flow_admit): rate $2 per $3 ms,
-- burst $4, concurrency $5, $6 wanted by holder $7 until $8, now $9.
SELECT granted, retry_at FROM S.flow_admit($1, $2, $3, $4, $5, $6, $7, $8, $9)
