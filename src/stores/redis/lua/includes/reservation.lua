-- Reserving pending tasks by patching their bodies: reserve-ready.lua, promote.lua and reserve.lua
-- include this instead of codec.lua. These scripts are on every delivery's path, where the
-- codec's full decode and re-encode of each body was most of their Redis time
-- (ADR 0005). Here a body is matched once for the fields a reservation
-- reads and rebuilt with one concatenation; the payload is never parsed. Keep the pattern in step with includes/codec.lua's layout:
--   s,attempts,runAt,maxAttempts,ttrMs,backoff,createdAt,updatedAt,reservedUntil,seq,receipt,topic,errLen|err payload
-- Writes are queued and sent by flushReserved() as one HSET, ZREM (delayed) and ZADD
-- (reserved) per call, plus two HINCRBY per topic.
--
-- A reserved task leaves `delayed`; one that was parked (due, but its park list not drained
-- yet: a shard nobody loaded for a while) leaves the parked counts instead. The including
-- script names the keys (reservationParked); only a task due in a bucket that has a park
-- list is looked up in `delayed` before the ZREM (includes/parked.lua), which a due task
-- almost never is.
-- @include patch
-- @include parked

-- { parked = KEYS[..], counts = KEYS[..] }: set by the including script.
local reservationParked = nil

--            s    attempts  runAt    maxAtt   ttrMs   (backoff,createdAt,) updated reservedUntil seq   receipt topic   (,errLen|...)
local RESERVE_PATTERN = '^(%a),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*,[^,]*,)[^,]*,[^,]*,([^,]*),([^,]*),([^,]*)(,.*)$'

-- A reservation's receipt: the attempt it counts, then the reserving call's nonce (with the
-- task's place in the call appended by the caller). The one place its format is written.
local function receiptFor(attempts, nonce)
  return attempts .. '.' .. nonce
end

local rHset, rZrem, rZadd, rMoved, rReserved = {}, {}, {}, {}, {}
-- The reserved tasks that may have been parked: members, runAts, topics (parkedAmong).
local rParkedM, rParkedR, rParkedT = {}, {}, {}
local untilMemo = {}

-- Reserves the task `id` whose current body is `body`, if it is pending and due by `now`:
-- attempts + 1, receipt "<attempts>.<nonce>", reservedUntil = now + ttr (the override or
-- the task's own). Returns 'reserved', new body | 'early', runAt (pending, not yet due) |
-- 'stale' (not pending, or reserved earlier in this call).
-- A task already reserved with the very receipt this call would give it was reserved by
-- this call's first run: ioredis sends a call again when the connection drops before its
-- reply, and the nonce is in the call's arguments. It is handed back as it is, so the
-- reservation reaches its consumer now instead of when its ttr runs out.
local function reserveBody(id, body, now, now36, ttrOverride, nonce)
  if rReserved[id] then return 'stale' end
  local s, attempts36, runAt36, maxAttempts36, ttr36, middle, seq36, receipt, topic, tail = string.match(body, RESERVE_PATTERN)
  if s ~= 'p' then
    if s == 'r' and receipt == receiptFor(tonumber(attempts36, 36), nonce) then
      rReserved[id] = true
      return 'reserved', body
    end
    return 'stale'
  end
  local runAt = tonumber(runAt36, 36)
  if runAt > now then return 'early', runAt end
  local attempts = tonumber(attempts36, 36) + 1
  local reservedUntil = now + (ttrOverride or tonumber(ttr36, 36))
  local until36 = untilMemo[reservedUntil]
  if not until36 then
    until36 = base36(reservedUntil)
    untilMemo[reservedUntil] = until36
  end
  local newBody = 'r,' .. base36(attempts) .. ',' .. runAt36 .. ',' .. maxAttempts36 .. ',' .. ttr36 .. ',' .. middle
    .. now36 .. ',' .. until36 .. ',' .. seq36 .. ',' .. receiptFor(attempts, nonce) .. ',' .. topic .. tail
  local m = seqBytes(tonumber(seq36, 36)) .. id
  local n = #rHset
  rHset[n + 1] = id
  rHset[n + 2] = newBody
  rZrem[#rZrem + 1] = m
  if mayBeParked(reservationParked.parked, runAt) then
    local c = #rParkedM + 1
    rParkedM[c], rParkedR[c], rParkedT[c] = m, runAt, topic
  end
  n = #rZadd
  rZadd[n + 1] = reservedUntil
  rZadd[n + 2] = m
  rMoved[topic] = (rMoved[topic] or 0) + 1
  rReserved[id] = true
  return 'reserved', newBody
end

-- Sends the queued writes: bodies, pending -> reserved in the indexes and the counters.
local function flushReserved()
  parkedAmong(KEYS[2], reservationParked.counts, rParkedM, rParkedR, rParkedT)
  flushPatched(rHset, 2, rZrem, {}, rMoved, 'p', 'r')
  for at = 1, #rZadd, 400 do redis.call('ZADD', KEYS[3], unpack(rZadd, at, math.min(at + 399, #rZadd))) end
  flushParked(reservationParked.counts)
  rHset, rZrem, rZadd, rMoved = {}, {}, {}, {}
  rParkedM, rParkedR, rParkedT = {}, {}, {}
end
