-- cancel-dead: dead -> cancelled (a dead task given up on; purged with the finished tasks).
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, ARGV[2] id
-- Returns: 'cancelled' | 'not_found' | 'not_dead'
-- @include codec
local now, id = tonumber(ARGV[1]), ARGV[2]
local t = load(id)
if not t then return 'not_found' end
if t.s ~= 'd' then return 'not_dead' end
leave(t, id)
save(t, id, 'x', now, b36(now))
flushCounts()
return 'cancelled'
