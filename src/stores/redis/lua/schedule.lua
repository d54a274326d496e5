-- schedule: creates each task that does not exist yet (create-if-absent by id, so a
-- retried call never makes two), pending, attempts 0. The caller packs the bodies.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts), KEYS[7] parkfrom,
--   KEYS[8] parked, KEYS[8 + k] the park list of the k-th bucket in ARGV (see below)
-- ARGV[1] now, ARGV[2] the first park bucket to record if parkfrom is unset,
--   ARGV[3] K (park buckets in this call), ARGV[4 .. 3 + K] those buckets;
--   then per task 6 values: id, packed body, runAt, seq (global, in input order), topic,
--   k (1..K: the task's park bucket; 0: the task is too near to park)
-- Returns: flat, per task in input order: 1 when created (at the runAt and seq it was given),
--   or 0, runAt, seq of the existing task (also for an id given twice in one call: the
--   first one is created, the second answers 0 with the first one's runAt and seq).
-- One HMGET finds the ids that exist; the new bodies go out as one HSET and the index
-- entries as one ZADD (in chunks), not one command per task. A new task whose bucket is at
-- or after parkfrom is parked instead: its id goes to the bucket's list (~20 bytes, not a
-- ~120-byte ZSET entry), and unpark.lua moves it into `delayed` before its bucket comes near.
-- @include codec
local out = {}
local K = tonumber(ARGV[3])
local first = 4 + K
local ids = {}
for i = first, #ARGV, 6 do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then return out end
local bodies = redis.call('HMGET', KEYS[1], unpack(ids))
local hset, zadd, created = {}, {}, {}
local parkFrom = nil
local parkLists = {}
local k = 0
for i = first, #ARGV, 6 do
  k = k + 1
  local id = ARGV[i]
  local body = bodies[k]
  if body then
    -- Only runAt (field 3) and seq (field 10) are needed.
    local runAt, seq = string.match(body, '^[^,]*,[^,]*,([^,]*),[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,([^,]*),')
    push(out, 0)
    push(out, tonumber(runAt, 36))
    push(out, tonumber(seq, 36))
  elseif created[id] then
    push(out, 0)
    push(out, created[id][1])
    push(out, created[id][2])
  else
    local runAt, seq = tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
    created[id] = { runAt, seq }
    push(hset, id, ARGV[i + 1])
    local park = tonumber(ARGV[i + 5])
    if park > 0 and parkFrom == nil then
      parkFrom = tonumber(redis.call('GET', KEYS[7]))
      if parkFrom == nil then
        -- Nothing was ever parked in this shard: every bucket before ARGV[2] is drained.
        parkFrom = tonumber(ARGV[2])
        redis.call('SET', KEYS[7], ARGV[2])
      end
    end
    if park > 0 and tonumber(ARGV[3 + park]) >= parkFrom then
      local list = parkLists[park]
      if not list then
        list = {}
        parkLists[park] = list
      end
      push(list, id)
    else
      push(zadd, runAt, seqBytes(seq) .. id)
    end
    count('p', ARGV[i + 4], 1)
    push(out, 1)
  end
end
sendChunked('HSET', KEYS[1], hset)
sendChunked('ZADD', KEYS[2], zadd)
for park, list in pairs(parkLists) do
  sendChunked('RPUSH', KEYS[8 + park], list)
  redis.call('ZADD', KEYS[8], ARGV[3 + park], ARGV[3 + park])
end
flushCounts()
return out
