-- reserve-ready: pops up to `max` ids from a topic's ready list and reserves each that is
-- still pending and due (as reserve.lua). Stale ids (cancelled, reserved, rescheduled later) are
-- dropped. An id due within 1 s of `now` was promoted by a process whose clock runs a
-- little ahead: it goes back to the head of the list and the caller retries at its runAt.
-- Tasks of a priority other than 0 wait in the topic's ranked ready set (promote.lua; ADR
-- 0056): those above 0 are taken first, highest first, then the list (priority 0), then
-- those below 0; an empty set costs one lookup of a missing key.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts), KEYS[7] the topic's ready list,
--   KEYS[8] this call's memo (took:<nonce>), KEYS[9] parked, KEYS[10] parkedh, KEYS[11] the ranked ready set
-- ARGV[1] now, ARGV[2] ttr override ('' = the task's ttrMs), ARGV[3] receipt nonce, ARGV[4] max (<= 1,000),
-- ARGV[5] how long the memo lives (ms), ARGV[6] '1' to leave the tasks below priority 0 (the caller
-- takes them only once no shard has others: ranked-shards.ts)
-- Returns: { ids left (the list and the ranked set; without those below priority 0 when they
--   are left), runAt of an id put back (0 = none), ids left above priority 0, ids left below
--   priority 0, then id, body per reserved task }
--
-- The ids a call reserved are kept in its memo for ARGV[5] ms. ioredis sends a call again
-- when the connection drops before the reply; the ids of the first run are popped by
-- then, so without the memo the second run would pop others and the first run's
-- reservations would reach no consumer until their ttr ran out (and a task on its last
-- attempt would die undelivered). The second run finds the memo and hands back those of
-- its tasks still reserved under this call's nonce, as they are, and pops nothing.
-- @include reservation
reservationParked = { parked = KEYS[9], counts = KEYS[10] }
local nonce = ARGV[3]
local memo = redis.call('GET', KEYS[8])
if memo then
  local out = { redis.call('LLEN', KEYS[7]) + redis.call('ZCARD', KEYS[11]), 0, redis.call('ZCOUNT', KEYS[11], '-inf', '(' .. RANKED_ABOVE_ZERO), 0 }
  local ids = {}
  for id in string.gmatch(memo, '[^,]+') do ids[#ids + 1] = id end
  local bodies = redis.call('HMGET', KEYS[1], unpack(ids))
  for j = 1, #ids do
    local body = bodies[j]
    if body then
      local s, attempts36, _, _, _, _, _, receipt = string.match(body, RESERVE_PATTERN)
      if s == 'r' then
        local mine = receiptFor(tonumber(attempts36, 36), nonce)
        if string.sub(receipt, 1, #mine) == mine then
          out[#out + 1] = ids[j]
          out[#out + 1] = body
        end
      end
    end
  end
  return out
end

local now = tonumber(ARGV[1])
local now36 = base36(now)
local ttr = tonumber(ARGV[2])
local max = tonumber(ARGV[4])
local hold = ARGV[6] == '1'
local out = { 0, 0, 0, 0 }
local reserved, popped = 0, 0
local took = {}
local early = false

-- Reserves `id` (body `body`) if it is pending and due; answers true when it was due
-- within 1 s of now (a promoting clock a little ahead): the caller puts it back and stops.
local function take(id, body)
  popped = popped + 1
  if not body then return false end
  local status, value = reserveBody(id, body, now, now36, ttr, nonce .. base36(popped))
  if status == 'reserved' then
    reserved = reserved + 1
    took[reserved] = id
    out[#out + 1] = id
    out[#out + 1] = value
  elseif status == 'early' and value <= now + 1000 then
    out[2] = value
    return true
  end
  return false
end

-- From the ranked set, scores in [low, high): members in score order, each with its score.
local function takeRanked(low, high)
  while not early and reserved < max and popped < max * 4 do
    local entries = redis.call('ZRANGEBYSCORE', KEYS[11], low, high, 'WITHSCORES', 'LIMIT', 0, math.min(max - reserved, max * 4 - popped))
    if #entries == 0 then return end
    local ids = {}
    for j = 1, #entries, 2 do ids[#ids + 1] = entries[j] end
    redis.call('ZREM', KEYS[11], unpack(ids))
    local bodies = redis.call('HMGET', KEYS[1], unpack(ids))
    for j = 1, #ids do
      if take(ids[j], bodies[j]) then
        -- Back with their scores: this id and the ones taken after it.
        local back = {}
        for k = j, #ids do
          back[#back + 1] = entries[2 * k]
          back[#back + 1] = ids[k]
        end
        redis.call('ZADD', KEYS[11], unpack(back))
        early = true
        return
      end
    end
  end
end

takeRanked('-inf', '(' .. RANKED_ABOVE_ZERO)
-- Pops at most 4 x max ids, so a list full of stale ids cannot make one call long.
while not early and reserved < max and popped < max * 4 do
  local ids = redis.call('LPOP', KEYS[7], math.min(max - reserved, max * 4 - popped))
  if not ids then break end
  local bodies = redis.call('HMGET', KEYS[1], unpack(ids))
  for j = 1, #ids do
    if take(ids[j], bodies[j]) then
      -- Back to the head of the list in their order: this id and the ones popped after it.
      local back = {}
      for k = #ids, j, -1 do back[#back + 1] = ids[k] end
      redis.call('LPUSH', KEYS[7], unpack(back))
      early = true
      break
    end
  end
end
if not hold then takeRanked(RANKED_ABOVE_ZERO, '+inf') end
flushReserved()
if reserved > 0 then redis.call('SET', KEYS[8], table.concat(took, ','), 'PX', ARGV[5]) end
local rankedLeft = redis.call('ZCARD', KEYS[11])
out[1] = redis.call('LLEN', KEYS[7]) + rankedLeft
if rankedLeft > 0 then
  out[3] = redis.call('ZCOUNT', KEYS[11], '-inf', '(' .. RANKED_ABOVE_ZERO)
  out[4] = rankedLeft - out[3]
  if hold then out[1] = out[1] - out[4] end
end
return out
