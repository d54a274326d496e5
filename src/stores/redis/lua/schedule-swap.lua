-- schedule-swap: a compare-and-swap of one recurring schedule (ScheduleStore.swapSchedule).
-- KEYS[1] the schedules hash (keys.ts `schedules`)
-- ARGV[1] schedule id, ARGV[2] the JSON text expected, ARGV[3] the JSON text to store
-- Returns: 1 when replaced, 0 when the stored text differs or the schedule is gone.
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return 1
end
return 0
