-- schedule-delete: deletes a recurring schedule (ScheduleStore.deleteSchedule) and, if there
-- was one, bumps the schedules version.
-- KEYS[1] the schedules hash (keys.ts `schedules`)
-- KEYS[2] the schedules version (keys.ts `schedulesVersion`)
-- ARGV[1] the schedule id
-- Returns: 1 deleted, 0 there was none.
local deleted = redis.call('HDEL', KEYS[1], ARGV[1])
if deleted == 1 then redis.call('INCR', KEYS[2]) end
return deleted
