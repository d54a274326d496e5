-- reschedule: moves a pending task's runAt (earlier or later); it stays pending.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts), KEYS[7] parkedh
-- ARGV[1] now, ARGV[2] id, ARGV[3] runAt
-- Returns: { 'rescheduled', runAt, seq, topic } | { 'not_found' } | { 'not_pending' }
-- @include codec
local now, id, runAt = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
-- A parked task leaves the parked counts (unindex) and goes into `delayed`, as every moved task.
parkedCountsKey = KEYS[7]
local t = load(id)
if not t then return { 'not_found' } end
if t.s ~= 'p' then return { 'not_pending' } end
leave(t, id)
setRunAt(t, runAt)
save(t, id, 'p', now, b36(now))
flushCounts()
flushParked(KEYS[7])
return { 'rescheduled', t.runAt, t.seq, laneOf(t) }
