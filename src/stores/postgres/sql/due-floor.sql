-- due-floor: where a lane's safety net starts (ready-reserver.ts sweep): the position of the
-- first pending task of the lane due by $3 after ($4 due time, $5 seq; -1 for the beginning),
-- locked or not (due_floor, migration 0014). $1 topic, $2 the push lane. No row: none.
SELECT due_at, seq FROM S.due_floor($1, $2, $3, $4::bigint, $5::bigint)
