-- flow-hold: each delivery $2 (by receipt) of topic $1 holds a slot until $3 (its reservation's end),
-- added or moved: a renewed reservation keeps its slot to its new end, and the reservations
-- in flight when a concurrency is set start holding theirs (topic-limits.ts).
INSERT INTO S.flow_slots (topic, holder, n, tokens, until)
SELECT $1, id, 1, 0, u FROM unnest($2::text[], $3::bigint[]) AS lease(id, u)
ON CONFLICT (topic, holder) DO UPDATE SET n = 1, tokens = 0, until = excluded.until
