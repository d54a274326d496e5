-- schedule-put-new: stores each recurring schedule whose id has none yet
-- (ScheduleStore.putNewSchedules), and answers the stored text of each that has one.
-- KEYS[1] the schedules hash (keys.ts `schedules`)
-- KEYS[2] the schedules version (keys.ts `schedulesVersion`), INCRed when one was stored
-- ARGV: pairs of (schedule id, the JSON text to store); the caller keeps them <= 500
-- Returns: one entry per pair, in order: '' stored, else the text stored already (left as it is).
local n = #ARGV / 2
local out, stored = {}, false
for i = 1, n do
  if redis.call('HSETNX', KEYS[1], ARGV[2 * i - 1], ARGV[2 * i]) == 1 then
    out[i] = ''
    stored = true
  else
    out[i] = redis.call('HGET', KEYS[1], ARGV[2 * i - 1])
  end
end
if stored then redis.call('INCR', KEYS[2]) end
return out
