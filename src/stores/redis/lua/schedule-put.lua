-- schedule-put: stores recurring schedules (ScheduleStore.putSchedule(s)), replacing any with
-- the same id, and bumps the schedules version with them.
-- KEYS[1] the schedules hash (keys.ts `schedules`)
-- KEYS[2] the schedules version (keys.ts `schedulesVersion`)
-- ARGV: pairs of (schedule id, the JSON text to store); the caller keeps them <= 500
-- Returns: how many were stored.
redis.call('HSET', KEYS[1], unpack(ARGV))
redis.call('INCR', KEYS[2])
return #ARGV / 2
