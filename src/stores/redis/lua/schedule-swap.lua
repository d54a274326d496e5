-- schedule-swap: compare-and-swap of recurring schedules (ScheduleStore.swapSchedules),
-- each on its own: a schedule is replaced only if its stored text is the one expected.
-- KEYS[1] the schedules hash (keys.ts `schedules`)
-- KEYS[2] the schedules version (keys.ts `schedulesVersion`), INCRed when ARGV[1] is '1'
--         and at least one swap happened: these swaps change definitions, not just move
-- ARGV[1] '1' or '0', then triples of (schedule id, the JSON text expected, the JSON text
-- to store); the caller keeps them <= 500
-- Returns: one character per triple, in order: '1' replaced, '0' changed since or gone.
local n = (#ARGV - 1) / 3
if n == 0 then return '' end
local ids = {}
for i = 1, n do ids[i] = ARGV[3 * i - 1] end
local current = redis.call('HMGET', KEYS[1], unpack(ids))
local out, hset, h = {}, {}, 0
for i = 1, n do
  if current[i] == ARGV[3 * i] then
    out[i] = '1'
    hset[h + 1] = ids[i]
    hset[h + 2] = ARGV[3 * i + 1]
    h = h + 2
  else
    out[i] = '0'
  end
end
if h > 0 then
  redis.call('HSET', KEYS[1], unpack(hset))
  if ARGV[1] == '1' then redis.call('INCR', KEYS[2]) end
end
return table.concat(out)
