-- extend: for each (id, receipt, ttr), a reservation in force (reserved with that receipt and
-- reservedUntil > now) runs until now + ttr (the task's own ttrMs when ttr is ''); its
-- member moves in `reserved` to the new time, which is where its ttr timer is read from.
-- The attempt, the receipt and updatedAt (the attempt's start) stay. A reservation that ran
-- out is lost even before anyone expired it: 'stale', nothing changes (core/task/decide.ts
-- decideExtend).
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, then triples: id, receipt, ttr (the caller keeps them <= 500)
-- Returns: { codes, reservedUntil... }: codes has one character per triple, in order: e
-- extended, s stale, n not_found; then the new reservedUntil of each 'e', in order.
-- @include codec
local now = tonumber(ARGV[1])
local n = (#ARGV - 1) / 3
local codes, reply = {}, { '' }
for k = 1, n do
  local id, receipt, ttr = ARGV[3 * k - 1], ARGV[3 * k], ARGV[3 * k + 1]
  local t = load(id)
  if not t then
    codes[k] = 'n'
  elseif t.s ~= 'r' or t.receipt ~= receipt or not t.reservedUntil or t.reservedUntil <= now then
    codes[k] = 's'
  else
    local reservedUntil = now + (tonumber(ttr) or t.ttr)
    setReservation(t, receipt, reservedUntil)
    redis.call('HSET', KEYS[1], id, encode(t))
    zadd(3, reservedUntil, member(t, id))
    codes[k] = 'e'
    reply[#reply + 1] = reservedUntil
  end
end
reply[1] = table.concat(codes)
return reply
