-- schedules-put-new: recurring schedules $1 created with the texts $2 at $3 where none has
-- the id; answers the ids created.
INSERT INTO S.schedules (id, schedule, updated_at) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
ON CONFLICT (id) DO NOTHING RETURNING id
