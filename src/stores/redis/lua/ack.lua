-- ack: reserved -> completed, only with the current receipt, for each (id, receipt).
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, then pairs: id, receipt (the caller keeps them <= 500)
-- Returns: per pair, in order: 'acked' | 'not_found' | 'stale'
-- @include codec
local now = tonumber(ARGV[1])
local now36 = b36(now)
local out = {}
for i = 2, #ARGV, 2 do
  local id, receipt = ARGV[i], ARGV[i + 1]
  local t = load(id)
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
flushCounts()
return out
