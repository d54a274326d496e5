-- events-latest: the id of the newest event, or null.
SELECT max(id)::text AS id FROM S.task_events
