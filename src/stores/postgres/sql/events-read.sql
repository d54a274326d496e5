-- events-read: up to $2 events after the id $1, oldest first (by the bigint id: the text
-- answered is named event_id, so ORDER BY cannot sort the text instead).
SELECT e.id::text AS event_id, e.event FROM S.task_events e WHERE e.id > $1 ORDER BY e.id LIMIT $2
