-- ack: reserved -> completed, only with the current receipt, for each (id, receipt).
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, then pairs: id, receipt (the caller keeps them <= 500)
-- Returns: per pair, in order: 'acked' | 'not_found' | 'stale'
-- @include codec
local now = tonumber(ARGV[1])
local now36 = b36(now)
local out = {}
deferWrites()
local ids = {}
for i = 2, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
local bodies = {}
if #ids > 0 then bodies = redis.call('HMGET', KEYS[1], unpack(ids)) end
for i = 2, #ARGV, 2 do
  local id, receipt = ARGV[i], ARGV[i + 1]
  local t = loadBody(id, bodies[i / 2])
  if not t then
    table.insert(out, 'not_found')
  elseif t.s ~= 'r' or t.receipt ~= receipt then
    table.insert(out, 'stale')
  else
    leave(t, id)
    setReservation(t, nil, nil)
    save(t, id, 'c', now, now36)
    table.insert(out, 'acked')
  end
end
flushWrites()
flushCounts()
return out
