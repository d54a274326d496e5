-- schedule: creates each task that does not exist yet (create-if-absent by id, so a
-- retried call never makes two), pending, attempts 0. The caller packs the bodies.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now; then per task 5 values: id, packed body, runAt, seq (global, in input order), topic
-- Returns: flat, per task in input order: 1 when created (at the runAt and seq it was given),
--   or 0, runAt, seq of the existing task (also for an id given twice in one call: the
--   first one is created, the second answers 0 with the first one's runAt and seq).
-- One HMGET finds the ids that exist; the new bodies go out as one HSET and the index
-- entries as one ZADD (in chunks), not one command per task.
-- @include codec
local out = {}
local ids = {}
for i = 2, #ARGV, 5 do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then return out end
local bodies = redis.call('HMGET', KEYS[1], unpack(ids))
local hset, zadd, created = {}, {}, {}
local k = 0
for i = 2, #ARGV, 5 do
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
    push(zadd, runAt, seqBytes(seq) .. id)
    count('p', ARGV[i + 4], 1)
    push(out, 1)
  end
end
sendChunked('HSET', KEYS[1], hset)
sendChunked('ZADD', KEYS[2], zadd)
flushCounts()
return out
