-- cancel: pending -> cancelled, for each id.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, ARGV[2..] ids (the caller keeps them <= 500)
-- Returns: per id, in order: 'cancelled' | 'not_found' | 'not_pending'
-- @include codec
local now = tonumber(ARGV[1])
local now36 = b36(now)
local out = {}
deferWrites()
local bodies = {}
if #ARGV > 1 then bodies = redis.call('HMGET', KEYS[1], unpack(ARGV, 2)) end
for i = 2, #ARGV do
  local id = ARGV[i]
  local t = loadBody(id, bodies[i - 1])
  if not t then
    out[i - 1] = 'not_found'
  elseif t.s ~= 'p' then
    out[i - 1] = 'not_pending'
  else
    leave(t, id)
    save(t, id, 'x', now, now36)
    out[i - 1] = 'cancelled'
  end
end
flushWrites()
flushCounts()
return out
