-- expire: the reservation named by the receipt ran out (reservedUntil <= now): -> dead when
-- out of attempts, else pending at now.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, ARGV[2] id, ARGV[3] receipt
-- Returns: { 'retrying', runAt, seq, lane, topic } | { 'dead', 0, 0, lane, topic } |
-- { 'held', reservedUntil, seq, lane, topic } (reserved with that receipt, not run out: it
-- was extended since its timer was set) | { 'not_found' } | { 'stale' }
-- @include codec
local now, id, receipt = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local t = load(id)
if not t then return { 'not_found' } end
if t.s ~= 'r' or t.receipt ~= receipt then return { 'stale' } end
if t.reservedUntil > now then return { 'held', t.reservedUntil, t.seq, laneOf(t), t.topic } end
local result = settleFailure(t, id, now, b36(now), now, 'reservation expired (ttr)', 'expired', 'reservation expired (ttr)')
flushCounts()
return result
