-- reschedule: moves a pending task's runAt (earlier or later); it stays pending.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, ARGV[2] id, ARGV[3] runAt
-- Returns: { 'rescheduled', runAt, seq, topic } | { 'not_found' } | { 'not_pending' }
-- @include codec
local now, id, runAt = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local t = load(id)
if not t then return { 'not_found' } end
if t.s ~= 'p' then return { 'not_pending' } end
leave(t, id)
setRunAt(t, runAt)
save(t, id, 'p', now, b36(now))
flushCounts()
return { 'rescheduled', t.runAt, t.seq, laneOf(t) }
