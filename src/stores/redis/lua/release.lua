-- release: gives back reservations that were never handed to a consumer (tasks a closing
-- process had prefetched): reserved -> pending with the attempt not counted, back at the
-- head of the topic's ready list in the order given (the caller's oldest first, so they are
-- taken again before what fell due after them), and a PUBLISH wakes consumers of other processes.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts), KEYS[8] the topic's ready list
-- (KEYS[7] is unused, so the ready list sits where promote.lua has its first one), KEYS[9]
-- its ranked ready set, where a task of a priority other than 0 goes back (ADR 0057)
-- ARGV[1] now, ARGV[2] the topic's ready channel, ARGV[3] the wakeup message; then pairs: id, receipt
-- Returns: { the number released (a receipt no longer current is skipped), 1 when the PUBLISH
--   was refused (sent with pcall, as promote.lua does) else 0 }
-- @include codec
local now = tonumber(ARGV[1])
local now36 = b36(now)
local released = 0
-- Last pair first: each LPUSH goes to the head, so the caller's first (oldest) ends there.
for i = #ARGV - 1, 4, -2 do
  local id, receipt = ARGV[i], ARGV[i + 1]
  local t = load(id)
  if t and t.s == 'r' and t.receipt == receipt then
    leave(t, id)
    setAttempts(t, t.attempts - 1)
    setReservation(t, nil, nil)
    save(t, id, 'p', now, now36)
    local p = priorityOf(t.body)
    if p == 0 then redis.call('LPUSH', KEYS[8], id) else redis.call('ZADD', KEYS[9], rankedScore(p, t.runAt), id) end
    released = released + 1
  end
end
flushCounts()
local refused = 0
if released > 0 and type(redis.pcall('PUBLISH', ARGV[2], ARGV[3])) == 'table' then refused = 1 end
return { released, refused }
