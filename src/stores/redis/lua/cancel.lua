-- cancel: pending -> cancelled, for each id.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts), KEYS[7] parked, KEYS[8] parkedh
-- ARGV[1] now, ARGV[2..] ids (the caller keeps them <= 500)
-- Returns: { codes, topic... }: codes has one character per id, in order: c cancelled,
-- n not_found, p not_pending (one string, not an array of codes: a call of 500 ids answers
-- with 500 bytes); then the topic of each cancelled task, in the order of its 'c' (the
-- engine counts each cancel under its task's own topic).
--
-- Without the codec include, on purpose: concurrent cancels of one shard come here a few
-- at a time, so the fixed cost of a call matters. Each body is patched in place (state ->
-- 'x', updatedAt -> now; the layout of includes/codec.lua, payload untouched), and the
-- writes go out as one HSET, ZREM and RPUSH plus two HINCRBY per topic.
--
-- Per id this is Redis' cost of a bulk cancel, so it makes few Lua strings (each is
-- allocated, hashed and later collected): one pattern gives the positions around updatedAt
-- (numbers, not substrings) and captures only seq and topic, and the new body is cut from
-- the old one around them. Most of the cost is not here but in moving bodies between Redis
-- and Lua: a script that only HMGETs the same ids takes ~40% of this one's time
-- (ADRs 0005 and 0011).
--
-- A cancelled task that was parked (not in `delayed`) leaves the parked counts
-- (includes/parked.lua). Only a task due in a bucket that has a park list may be parked:
-- one ZRANGE per call finds the first such bucket, and only the tasks due there or later
-- are looked up in `delayed` (one ZMSCORE) before the one ZREM. Whether a task was parked
-- is decided by its own member in `delayed`, never by what the park lists hold: a stale id
-- that a cancelled and purged parked task left in a list cannot make a new task of that id
-- count twice.
-- @include patch
-- @include parked
local n = #ARGV - 1
if n == 0 then return { '' } end
local now36 = base36(tonumber(ARGV[1]))
local bodies = redis.call('HMGET', KEYS[1], unpack(ARGV, 2))
local find, sub, byte = string.find, string.sub, string.byte
local out, hset, zrem, done, deltas, seen, reply = {}, {}, {}, {}, {}, {}, { '' }
local h, z = 0, 0
-- The tasks that may be parked: members, runAts, topics.
local cm, cr, ct = {}, {}, {}
for i = 1, n do
  local body = bodies[i]
  if not body then
    out[i] = 'n'
  elseif byte(body, 1) ~= 112 then -- not 'p'
    out[i] = 'p'
  else
    local id = ARGV[i + 1]
    -- p,attempts, | runAt | ,maxAttempts,ttrMs,backoff,createdAt, | updatedAt | ,reservedUntil,seq,receipt,topic,errLen|...
    local _, _, ra, rb, from, to, seq, topic = find(body, '^p,[^,]*,()[^,]*(),[^,]*,[^,]*,[^,]*,[^,]*,()[^,]*(),[^,]*,([^,]*),[^,]*,([^,]*),')
    if not from or seen[id] then
      out[i] = 'p'
    else
      seen[id] = true
      z = z + 1
      local m = seqBytes(tonumber(seq, 36)) .. id
      zrem[z] = m
      done[z] = id
      local runAt = parkThreshold(KEYS[7]) ~= math.huge and tonumber(sub(body, ra, rb - 1), 36)
      if runAt and mayBeParked(KEYS[7], runAt) then
        local c = #cm + 1
        cm[c], cr[c], ct[c] = m, runAt, topic
      end
      hset[h + 1] = id
      hset[h + 2] = 'x' .. sub(body, 2, from - 1) .. now36 .. sub(body, to)
      h = h + 2
      deltas[topic] = (deltas[topic] or 0) + 1
      out[i] = 'c'
      reply[z + 1] = topic
    end
  end
end
parkedAmong(KEYS[2], KEYS[8], cm, cr, ct)
flushPatched(hset, 2, zrem, done, deltas, 'p', 'x')
flushParked(KEYS[8])
reply[1] = table.concat(out)
return reply
