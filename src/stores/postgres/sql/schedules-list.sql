-- schedules-list: every recurring schedule, by id.
SELECT id, schedule FROM S.schedules ORDER BY id
