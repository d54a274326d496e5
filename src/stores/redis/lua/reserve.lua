-- reserve: for each id pending with runAt <= now: -> reserved, attempts + 1, new receipt,
-- reservedUntil = now + ttr. Others are skipped.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts), KEYS[7] parked, KEYS[8] parkedh
-- ARGV[1] now, ARGV[2] ttr override ('' = the task's ttrMs), ARGV[3] receipt nonce, ARGV[4..] ids (<= 500)
-- Returns: flat { id, body } per reserved task, in input order.
-- @include reservation
reservationParked = { parked = KEYS[7], counts = KEYS[8] }
local now = tonumber(ARGV[1])
local now36 = base36(now)
local ttr = tonumber(ARGV[2])
local out = {}
local bodies = {}
if #ARGV > 3 then bodies = redis.call('HMGET', KEYS[1], unpack(ARGV, 4)) end
for i = 4, #ARGV do
  local id = ARGV[i]
  local body = bodies[i - 3]
  if body then
    local status, value = reserveBody(id, body, now, now36, ttr, ARGV[3] .. base36(i))
    if status == 'reserved' then
      out[#out + 1] = id
      out[#out + 1] = value
    end
  end
end
flushReserved()
return out
