-- promote: makes due pending tasks available to consumers. For each topic, the first
-- `reserveFor` due tasks are reserved at once for consumers of the promoting process that are
-- asking now (one round trip from timer to consumer); the others are appended to the
-- shared ready list of their topic, for consumers of any process, and a PUBLISH wakes them.
-- Only the shard's lease holder may promote (the lease value is the fencing token). A task
-- in a ready list stays pending and stays in `delayed` (loadDue still reports it; a new
-- owner re-promotes it): reserve-ready.lua reserves it at most once, whatever the list entries.
-- A task of a priority other than 0 goes to its topic's ranked ready set instead (score
-- rankedScore: higher priorities first), and a topic that has one in this call reserves
-- nothing at once: its consumers take the whole batch from the ready structures, highest
-- priority first (reserve-ready.lua; ADR 0057).
-- KEYS: standard (pool, delayed, reserved, dead, done, counts), KEYS[7] lease,
--   KEYS[8..7+T] the ready list of each topic in this call, KEYS[8+T..7+2T] the ranked ready
--   set of each, KEYS[8+2T] parked, KEYS[9+2T] parkedh
-- ARGV[1] lease value, ARGV[2] now, ARGV[3] the wakeup message ("<shard> <owner>"), ARGV[4] T,
-- ARGV[5..4+T] the ready channel of each topic, ARGV[5+T..4+2T] how many to reserve per topic,
-- ARGV[5+2T] receipt nonce; then pairs: id, topic number (1..T)
-- Returns: { 1, pushed per topic (T values), of which above priority 0 (T values), then id,
--   body per reserved task } or { 0 }; 2 in place of the 1 when a PUBLISH was refused (a
--   user whose ACL lacks it): sent with pcall after the writes, which Redis does not roll
--   back, so a refusal loses the notice only, not this reply and the tasks it reserved. The wakeup message of a topic that had tasks above
--   priority 0 pushed ends in " r" (ranked-shards.ts).
--   when the lease is not ours.
-- @include reservation
reservationParked = { parked = KEYS[#KEYS - 1], counts = KEYS[#KEYS] }
if redis.call('GET', KEYS[7]) ~= ARGV[1] then return { 0 } end
local now = tonumber(ARGV[2])
local now36 = base36(now)
local topics = tonumber(ARGV[4])
local pushed, toReserve = {}, {}
for k = 1, topics do
  pushed[k] = 0
  toReserve[k] = tonumber(ARGV[4 + topics + k])
end
local nonce = ARGV[5 + 2 * topics]
local reserved = {}
local first = 6 + 2 * topics
local ids = {}
for i = first, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
local bodies = {}
if #ids > 0 then bodies = redis.call('HMGET', KEYS[1], unpack(ids)) end
local ready, ranked, above = {}, {}, {}
for k = 1, topics do
  ready[k] = {}
  ranked[k] = {}
  above[k] = 0
end
-- The priority of each body; a topic with any other than 0 reserves nothing at once.
local priorities = {}
for i = first, #ARGV, 2 do
  local body = bodies[(i - first) / 2 + 1]
  if body then
    local p = priorityOf(body)
    priorities[i] = p
    if p ~= 0 then toReserve[tonumber(ARGV[i + 1])] = 0 end
  end
end
for i = first, #ARGV, 2 do
  local id, k = ARGV[i], tonumber(ARGV[i + 1])
  local body = bodies[(i - first) / 2 + 1]
  if body then
    if toReserve[k] > 0 then
      -- reserveBody checks state and runAt itself: a task not pending and due is skipped.
      local status, newBody = reserveBody(id, body, now, now36, nil, nonce .. base36(i))
      if status == 'reserved' then
        toReserve[k] = toReserve[k] - 1
        reserved[#reserved + 1] = id
        reserved[#reserved + 1] = newBody
      end
    else
      -- Only the state and runAt decide whether an id goes to the ready list.
      local s, runAt = string.match(body, '^(%a),[^,]*,([^,]*)')
      if s == 'p' and tonumber(runAt, 36) <= now and not rReserved[id] then
        local p = priorities[i]
        if p == 0 then
          table.insert(ready[k], id)
        else
          table.insert(ranked[k], rankedScore(p, tonumber(runAt, 36)))
          table.insert(ranked[k], id)
          if p > 0 then above[k] = above[k] + 1 end
        end
        pushed[k] = pushed[k] + 1
      end
    end
  end
end
flushReserved()
for k = 1, topics do
  for from = 1, #ready[k], 400 do
    redis.call('RPUSH', KEYS[7 + k], unpack(ready[k], from, math.min(from + 399, #ready[k])))
  end
  for from = 1, #ranked[k], 400 do
    redis.call('ZADD', KEYS[7 + topics + k], unpack(ranked[k], from, math.min(from + 399, #ranked[k])))
  end
end
local out = { 1 }
for k = 1, topics do
  if pushed[k] > 0 then
    local message = ARGV[3]
    if above[k] > 0 then message = message .. ' r' end
    if type(redis.pcall('PUBLISH', ARGV[4 + k], message)) == 'table' then out[1] = 2 end
  end
  table.insert(out, pushed[k])
end
for k = 1, topics do table.insert(out, above[k]) end
for _, v in ipairs(reserved) do table.insert(out, v) end
return out
