-- schedule: creates each task that does not exist yet (create-if-absent by id, so a
-- retried call never makes two), pending, attempts 0. The caller packs the bodies.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts), KEYS[7] parkfrom,
--   KEYS[8] parked, KEYS[9] parkedh (the parked counts), KEYS[9 + k] the park list of the
--   k-th bucket in ARGV (see below)
-- ARGV[1] now, ARGV[2] the first park bucket to record if parkfrom is unset,
--   ARGV[3] K (park buckets in this call), ARGV[4 .. 3 + K] those buckets;
--   then per task 6 values: id, packed body, runAt, seq (global, in input order), topic,
--   k (1..K: the task's park bucket; 0: the task is too near to park)
-- Returns: flat, per task in input order: 1 when created (at the runAt and seq it was given),
--   or, for an id that exists, 2 or 0 followed by its runAt and seq: 2 when it is pending
--   on the same topic and lane (with a push url or without, as the new body) (the caller puts its timer in a wheel again: this call may be a
--   retry of one whose reply was lost, which created it), 0 otherwise, and for the second
--   of an id given twice in one call (0 with the first one's runAt and seq).
-- One HMGET finds the ids that exist; the new bodies go out as one HSET and the index
-- entries as one ZADD (in chunks), not one command per task. A new task whose bucket is at
-- or after parkfrom is parked instead: its id goes to the bucket's list (~20 bytes, not a
-- ~120-byte ZSET entry), and unpark.lua moves it into `delayed` before its bucket comes near.
-- Lean, like ack.lua and cancel.lua: it includes patch.lua only (seqBytes), not the codec,
-- whose fixed cost per call counted when a few tasks arrive at a time (S3's pattern). Per
-- task it builds no table and no string but the ZSET member of a task not parked: a
-- duplicate id remembers its ARGV position, and counts are summed per topic. A parked task
-- is also counted in the parked counts (includes/parked.lua: summed per hour and topic, in
-- tables keyed by number, one HINCRBY per field and call).
-- @include patch
-- @include parked

-- Whether a packed body has a url (codec.lua: a 14th header field, not empty; a 15th, the
-- trace, may follow an empty one).
local URL_FIELD = '^' .. string.rep('[^,|]*,', 13) .. '([^,|]*)'
local function urlFieldIn(body)
  local url = string.match(body, URL_FIELD)
  return url ~= nil and url ~= ''
end

local out = {}
local K = tonumber(ARGV[3])
local first = 4 + K
local ids = {}
for i = first, #ARGV, 6 do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then return out end
local bodies = redis.call('HMGET', KEYS[1], unpack(ids))
local hset, zadd, created, perTopic = {}, {}, {}, {}
local nh, nz, no = 0, 0, 0
-- Per park bucket index: its list of ids, or false when the bucket is below parkfrom.
local parkLists = {}
local parkFrom = nil
local k = 0
for i = first, #ARGV, 6 do
  k = k + 1
  local id = ARGV[i]
  local body = bodies[k]
  if body then
    -- The state (field 1), runAt (3), seq (10) and topic (12).
    local state, runAt, seq, topic = string.match(body, '^(%a),[^,]*,([^,]*),[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,([^,]*),[^,]*,([^,]*),')
    -- Same lane too: both with a push url (a 14th header field, not empty) or both without.
    out[no + 1] = (state == 'p' and topic == ARGV[i + 4] and urlFieldIn(body) == urlFieldIn(ARGV[i + 1])) and 2 or 0
    out[no + 2] = tonumber(runAt, 36)
    out[no + 3] = tonumber(seq, 36)
    no = no + 3
  elseif created[id] then
    local at = created[id]
    out[no + 1] = 0
    out[no + 2] = tonumber(ARGV[at + 2])
    out[no + 3] = tonumber(ARGV[at + 3])
    no = no + 3
  else
    created[id] = i
    hset[nh + 1] = id
    hset[nh + 2] = ARGV[i + 1]
    nh = nh + 2
    local park = tonumber(ARGV[i + 5])
    local list = nil
    if park > 0 then
      list = parkLists[park]
      if list == nil then
        if parkFrom == nil then
          parkFrom = tonumber(redis.call('GET', KEYS[7]))
          if parkFrom == nil then
            -- Nothing was ever parked in this shard: every bucket before ARGV[2] is drained.
            parkFrom = tonumber(ARGV[2])
            redis.call('SET', KEYS[7], ARGV[2])
          end
        end
        list = tonumber(ARGV[3 + park]) >= parkFrom and {} or false
        parkLists[park] = list
      end
    end
    if list then
      list[#list + 1] = id
      parkedCount(KEYS[9], tonumber(ARGV[i + 2]), ARGV[i + 4], 1)
    else
      zadd[nz + 1] = ARGV[i + 2]
      zadd[nz + 2] = seqBytes(tonumber(ARGV[i + 3])) .. id
      nz = nz + 2
    end
    local topic = ARGV[i + 4]
    perTopic[topic] = (perTopic[topic] or 0) + 1
    no = no + 1
    out[no] = 1
  end
end
-- unpack has a C stack limit, hence chunks of 400 arguments.
local function send(cmd, key, args)
  for from = 1, #args, 400 do redis.call(cmd, key, unpack(args, from, math.min(from + 399, #args))) end
end
send('HSET', KEYS[1], hset)
send('ZADD', KEYS[2], zadd)
for park, list in pairs(parkLists) do
  if list then
    send('RPUSH', KEYS[9 + park], list)
    redis.call('ZADD', KEYS[8], ARGV[3 + park], ARGV[3 + park])
  end
end
for topic, n in pairs(perTopic) do redis.call('HINCRBY', KEYS[6], 'p' .. topic, n) end
flushParked(KEYS[9])
return out
