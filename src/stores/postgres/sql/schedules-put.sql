-- schedules-put: recurring schedules $1 set to the texts $2 at $3, created or replaced.
INSERT INTO S.schedules (id, schedule, updated_at) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
ON CONFLICT (id) DO UPDATE SET schedule = excluded.schedule, updated_at = excluded.updated_at
