-- schedules-read: the recurring schedules $1.
SELECT id, schedule FROM S.schedules WHERE id = ANY($1::text[])
