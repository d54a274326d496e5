-- cancel: pending -> cancelled.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, ARGV[2] id
-- Returns: 'cancelled' | 'not_found' | 'not_pending'
-- @include codec
local now, id = tonumber(ARGV[1]), ARGV[2]
local t = load(id)
if not t then return 'not_found' end
if t.s ~= 'p' then return 'not_pending' end
leave(t, id, now)
save(t, id, 'x')
return 'cancelled'
