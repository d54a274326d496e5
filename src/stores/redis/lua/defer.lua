-- defer: gives a reservation back without counting its attempt (the push circuit breaker
-- holds the task back): reserved -> pending at runAt, attempts - 1, lastError kept; only
-- with the current receipt.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, ARGV[2] id, ARGV[3] receipt, ARGV[4] runAt
-- Returns: { 'deferred', runAt, seq, lane } | { 'not_found' } | { 'stale' }
-- @include codec
local now, id, receipt, runAt = tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4])
local t = load(id)
if not t then return { 'not_found' } end
if t.s ~= 'r' or t.receipt ~= receipt then return { 'stale' } end
leave(t, id)
setReservation(t, nil, nil)
setAttempts(t, math.max(0, t.attempts - 1))
setRunAt(t, runAt)
save(t, id, 'p', now, b36(now))
flushCounts()
return { 'deferred', t.runAt, t.seq, laneOf(t) }
