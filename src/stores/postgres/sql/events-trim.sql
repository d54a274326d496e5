-- events-trim: deletes the events older than the newest $1.
DELETE FROM S.task_events WHERE id <= (SELECT max(id) FROM S.task_events) - $1
