-- events-read: up to $2 events after the id $1, oldest first.
SELECT id::text AS id, event FROM S.task_events WHERE id > $1 ORDER BY id LIMIT $2
