-- retry-dead: dead -> pending at runAt, attempts reset to 0.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, ARGV[2] id, ARGV[3] runAt
-- Returns: { 'retried', runAt, seq, topic } | { 'not_found' } | { 'not_dead' }
-- @include codec
local now, id, runAt = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local t = load(id)
if not t then return { 'not_found' } end
if t.s ~= 'd' then return { 'not_dead' } end
leave(t, id)
setAttempts(t, 0)
setRunAt(t, runAt)
save(t, id, 'p', now, b36(now))
flushCounts()
return { 'retried', t.runAt, t.seq, laneOf(t) }
