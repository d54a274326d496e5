-- Parked counts (keys.ts `parkedh`), for dueHistogram: how many pending tasks are parked,
-- per hour of runAt (field '<hour>', hour = floor(runAt / 3600000)) and per hour and topic
-- ('<hour>:<topic>'). A pending task is parked when it is not in `delayed`: then it waits
-- in the park list of its runAt's bucket (schedule.lua put it there, and its runAt cannot
-- change without it going into `delayed`). Every pending task is in exactly one of the two,
-- and every script that moves a pending task across keeps the counts in step:
--   schedule.lua  parks a new task                                   +1
--   unpark.lua    moves a pending task that is not in `delayed` yet  -1
--   cancel.lua, reschedule.lua (codec unindex), reserve / promote / reserve-ready
--                 (reservation.lua): a pending task whose ZREM from `delayed` removed
--                 nothing was parked                                 -1
-- A zero field is deleted (a negative one too: never counted below zero).
--
-- Field 'from' is the first park bucket whose tasks are counted: 0 for a namespace made
-- with the counts, one past its last park list for a namespace that parked tasks before
-- them (parked-init.lua, run when a store opens). A parked task is counted iff its runAt's
-- bucket is >= 'from', in every script alike, so the older lists' tasks are neither
-- counted in nor out; dueHistogram reads those lists instead until they are drained.
--
-- Deltas are summed per call in tables keyed by numbers (no string per task) and written
-- by flushParked: one HINCRBY per field.

local PARK_BUCKET_MS, HOUR_MS = 1048576, 3600000

local parkedTotals, parkedTopics = {}, {}
local countedFromMemo = nil

-- The first counted park bucket ('from'; absent: 0).
local function countedFrom(countsKey)
  if countedFromMemo == nil then countedFromMemo = tonumber(redis.call('HGET', countsKey, 'from')) or 0 end
  return countedFromMemo
end

-- A parked task (runAt, topic) is parked (+1) or leaves the park (-1).
local function parkedCount(countsKey, runAt, topic, delta)
  if math.floor(runAt / PARK_BUCKET_MS) < countedFrom(countsKey) then return end
  local hour = math.floor(runAt / HOUR_MS)
  parkedTotals[hour] = (parkedTotals[hour] or 0) + delta
  local byTopic = parkedTopics[hour]
  if not byTopic then
    byTopic = {}
    parkedTopics[hour] = byTopic
  end
  byTopic[topic] = (byTopic[topic] or 0) + delta
end

local function parkedField(countsKey, field, delta)
  if delta ~= 0 and redis.call('HINCRBY', countsKey, field, delta) <= 0 then redis.call('HDEL', countsKey, field) end
end

local function flushParked(countsKey)
  for hour, delta in pairs(parkedTotals) do
    local h = string.format('%d', hour)
    parkedField(countsKey, h, delta)
    for topic, d in pairs(parkedTopics[hour]) do parkedField(countsKey, h .. ':' .. topic, d) end
  end
  parkedTotals, parkedTopics = {}, {}
end

-- The first park bucket a pending task may be parked in: its list must exist (`parked`
-- lists them). A task due before it is in `delayed` for sure, so removing it needs no check
-- (math.huge when nothing is parked in the shard). One ZRANGE per call, on first use.
local parkThresholdMemo = nil
local function parkThreshold(parkedKey)
  if parkThresholdMemo == nil then
    local first = redis.call('ZRANGE', parkedKey, 0, 0)[1]
    parkThresholdMemo = first and tonumber(first) or math.huge
  end
  return parkThresholdMemo
end

-- Whether a pending task due at runAt may be parked (then whether it is in `delayed` must
-- be checked before it leaves: parkedGone, or the batch of parkedAmong).
local function mayBeParked(parkedKey, runAt)
  return math.floor(runAt / PARK_BUCKET_MS) >= parkThreshold(parkedKey)
end

-- Takes a pending task out of `delayed` (member m) for good or to move it; when it was not
-- there it was parked, and leaves the counts.
local function parkedGone(delayedKey, countsKey, m, runAt, topic)
  if redis.call('ZREM', delayedKey, m) == 0 then parkedCount(countsKey, runAt, topic, -1) end
end

-- The batch form, before the caller's one ZREM of a batch: of the pending tasks that may
-- be parked (members, and their runAts and topics, in step), those not in `delayed` leave
-- the counts. One ZMSCORE per 400.
local function parkedAmong(delayedKey, countsKey, members, runAts, topics)
  for at = 1, #members, 400 do
    local last = math.min(at + 399, #members)
    local scores = redis.call('ZMSCORE', delayedKey, unpack(members, at, last))
    for x = at, last do
      if not scores[x - at + 1] then parkedCount(countsKey, runAts[x], topics[x], -1) end
    end
  end
end
