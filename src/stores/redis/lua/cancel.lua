-- cancel: pending -> cancelled, for each id.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, ARGV[2..] ids (the caller keeps them <= 500)
-- Returns: per id, in order: 'cancelled' | 'not_found' | 'not_pending'
-- @include codec
local now = tonumber(ARGV[1])
local now36 = b36(now)
local out = {}
for i = 2, #ARGV do
  local id = ARGV[i]
  local t = load(id)
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
flushCounts()
return out
