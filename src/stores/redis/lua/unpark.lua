-- unpark: moves the tasks parked in buckets before a target bucket into `delayed`, and makes
-- sure that no task is parked before the target from now on.
-- KEYS[1] pool, KEYS[2] delayed, KEYS[3] parkfrom, KEYS[4] parked, KEYS[5] parkedh,
--   KEYS[5 + k] the park list of the k-th bucket in ARGV[3 ..]
-- ARGV[1] target bucket, ARGV[2] limit (ids taken from the lists at most, <= 2,000),
--   ARGV[3 ..] the buckets whose lists are KEYS[6 ..] (each before the target)
-- Returns: { ids taken, park buckets still listed before the target, parkfrom }
--
-- parkfrom goes up to the target first, so schedule.lua parks nothing before the target
-- any more and the lists below it only shrink: callers repeat until the second value is 0.
-- Each id is checked against its body: a task that is still pending goes into `delayed`
-- at its current runAt and seq. Ids of tasks cancelled, finished or purged meanwhile are
-- dropped. A task rescheduled (or retried) meanwhile is in `delayed` already, under the
-- same member at its current runAt, so adding it again changes nothing; a new task made
-- with the id of a purged one goes into `delayed` early, which is always correct.
--
-- The parked counts (includes/parked.lua) lose each pending task that was not in `delayed`
-- before this call (ZMSCORE, before the ZADD) and is met for the first time in it: the
-- tasks that were parked. An id met again (the same id twice in a list, or a task that is
-- in `delayed` already: rescheduled, or made anew in `delayed` after the parked one was
-- cancelled and purged) changes nothing. A stale id of a purged task whose id was reused
-- by a new task parked in a later list takes the new task out of parking early: it leaves
-- the counts here, once, and its own entry in the later list finds it in `delayed`.
-- @include codec
-- @include parked
local target, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local parkFrom = tonumber(redis.call('GET', KEYS[3]))
if parkFrom == nil or parkFrom < target then
  parkFrom = target
  redis.call('SET', KEYS[3], ARGV[1])
end
local taken = 0
local seen = {}
for k = 6, #KEYS do
  if taken >= limit then break end
  local bucket = ARGV[k - 3]
  local ids = redis.call('LPOP', KEYS[k], limit - taken)
  if ids then
    taken = taken + #ids
    local zadd = {}
    for at = 1, #ids, 400 do
      local last = math.min(at + 399, #ids)
      local bodies = redis.call('HMGET', KEYS[1], unpack(ids, at, last))
      local members, moved = {}, {}
      for j = at, last do
        local body = bodies[j - at + 1]
        if body and string.sub(body, 1, 2) == 'p,' then
          -- runAt (field 3), seq (10), topic (12)
          local runAt, seq, topic = string.match(body, '^[^,]*,[^,]*,([^,]*),[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,([^,]*),[^,]*,([^,]*),')
          local m = seqBytes(tonumber(seq, 36)) .. ids[j]
          runAt = tonumber(runAt, 36)
          push(zadd, runAt, m)
          members[#members + 1] = m
          moved[#moved + 1] = { ids[j], runAt, topic }
        end
      end
      if #members > 0 then
        local scores = redis.call('ZMSCORE', KEYS[2], unpack(members))
        for x = 1, #members do
          local t = moved[x]
          if not scores[x] and not seen[t[1]] then parkedCount(KEYS[5], t[2], t[3], -1) end
          seen[t[1]] = true
        end
      end
    end
    sendChunked('ZADD', KEYS[2], zadd)
  end
  if redis.call('LLEN', KEYS[k]) == 0 then redis.call('ZREM', KEYS[4], bucket) end
end
flushParked(KEYS[5])
return { taken, redis.call('ZCOUNT', KEYS[4], '-inf', '(' .. ARGV[1]), parkFrom }
