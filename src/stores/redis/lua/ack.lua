-- ack: reserved -> completed, only with the current receipt.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, ARGV[2] id, ARGV[3] receipt
-- Returns: 'acked' | 'not_found' | 'stale'
-- @include codec
local now, id, receipt = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local t = load(id)
if not t then return 'not_found' end
if t.s ~= 'r' or t.receipt ~= receipt then return 'stale' end
leave(t, id, now)
t.receipt = nil
t.reservedUntil = nil
save(t, id, 'c')
return 'acked'
