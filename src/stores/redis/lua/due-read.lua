-- due-read: reads pending tasks' due times for dueHistogram where no count holds them: the
-- members of `delayed` in a time range that are of one topic (`delayed` has no topic), or
-- the tasks still parked in a park list. Read-only; the caller pages (<= 1,000 a call) and
-- caps the entries it reads per query. Only due times (and ids) leave Redis, no body.
-- Mode 'delayed': KEYS[1] pool, KEYS[2] delayed
--   ARGV[1] 'delayed', ARGV[2] min score, ARGV[3] max score (exclusive), ARGV[4] offset,
--   ARGV[5] count, ARGV[6] '=' .. topic
--   Returns: { members read, last score read ('' if none), then the score of each member of the topic }
-- Mode 'list': KEYS[1] pool, KEYS[2] delayed, KEYS[3] the park list of a bucket
--   ARGV[1] 'list', ARGV[2] the bucket, ARGV[3] first index, ARGV[4] last index,
--   ARGV[5] '' (all topics) or '=' .. topic
--   Returns: { ids read, then id, runAt per task parked by this entry }
--
-- A list entry is a parked task when its body is pending, due in the list's bucket (a
-- parked task's runAt never changes while it is parked) and not in `delayed` (rescheduled
-- tasks, and tasks made anew under the id of a purged one, are there). The same id twice
-- in one list (a stale entry, and a new task with its id parked in the same bucket) is
-- answered twice: the caller counts an id once per list.
local PARK_BUCKET_MS = 1048576
local out = { 0 }
if ARGV[1] == 'delayed' then
  local raw = redis.call('ZRANGEBYSCORE', KEYS[2], ARGV[2], '(' .. ARGV[3], 'WITHSCORES', 'LIMIT', ARGV[4], ARGV[5])
  local n = #raw / 2
  out[1] = n
  out[2] = ''
  if n == 0 then return out end
  out[2] = raw[#raw]
  local ids = {}
  for i = 1, n do ids[i] = string.sub(raw[2 * i - 1], 8) end
  local bodies = redis.call('HMGET', KEYS[1], unpack(ids))
  local topic = string.sub(ARGV[6], 2)
  for i = 1, n do
    local body = bodies[i]
    -- topic: field 12
    if body and string.match(body, '^[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,([^,]*),') == topic then
      out[#out + 1] = raw[2 * i]
    end
  end
  return out
end

local bucket = tonumber(ARGV[2])
local ids = redis.call('LRANGE', KEYS[3], ARGV[3], ARGV[4])
out[1] = #ids
if #ids == 0 then return out end
local all = ARGV[5] == ''
local topic = string.sub(ARGV[5], 2)
local bodies = redis.call('HMGET', KEYS[1], unpack(ids))
local members, found = {}, {}
for j = 1, #ids do
  local body = bodies[j]
  if body and string.sub(body, 1, 2) == 'p,' then
    -- runAt (field 3), seq (10), topic (12)
    local runAt, seq, t = string.match(body, '^[^,]*,[^,]*,([^,]*),[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,([^,]*),[^,]*,([^,]*),')
    runAt = tonumber(runAt, 36)
    if (all or t == topic) and math.floor(runAt / PARK_BUCKET_MS) == bucket then
      members[#members + 1] = struct.pack('>I7', tonumber(seq, 36)) .. ids[j]
      found[#found + 1] = j
      found[#found + 1] = runAt
    end
  end
end
if #members == 0 then return out end
local scores = redis.call('ZMSCORE', KEYS[2], unpack(members))
for x = 1, #members do
  if not scores[x] then
    out[#out + 1] = ids[found[2 * x - 1]]
    out[#out + 1] = found[2 * x]
  end
end
return out
