-- Shared helpers, inlined into each script by `-- @include codec` (scripts.ts).
--
-- Task body: one HASH field per task in the shard's pool, packed to keep Redis small:
--   s,attempts,runAt,maxAttempts,ttrMs,backoff,createdAt,updatedAt,reservedUntil,seq,receipt,topic,errLen[:histLen:count][,url[,trace[,priority]]]|err history payload
--    1    2      3       4        5      6        7         8           9         10    11     12    13                     14   15     16
-- Field 13 and the history between the error and the payload: see appendAttempt (patch.lua).
-- Field 14 is there for a task with its own push url, and empty when field 15 is there
-- without one (codec.ts escapes ',', '|' and '%' in both); the scripts never read the url
-- beyond "not empty", which files the task's timers under its topic's push lane
-- '~push:<topic>' (laneOf) instead of its topic. Field 15, the trace context, is there
-- only for a task scheduled with one; the scripts carry it as it is. Field 16, the priority
-- (decimal), only for a task of a priority other than 0 (patch.lua priorityOf, ADR 0057).
-- Integers in base 36; backoff is "baseMs:factor:maxMs:jitter" (baseMs, maxMs base 36;
-- empty for the default policy, which nack.lua gets in ARGV);
-- empty reservedUntil / receipt / errLen mean null, empty updatedAt means createdAt.
-- State chars: p pending, r reserved, c completed, x cancelled, d dead. Ids and topics
-- never contain ',' or '|' (the engine validates them). codec.ts is the TS side.
-- The scripts on every delivery's path do not include this file (its fixed cost and its
-- full decode showed there): cancel.lua and ack.lua patch bodies with one pattern each and
-- include only patch.lua; reserve-ready.lua, promote.lua and reserve.lua include reservation.lua. Keep
-- their patterns in step with this layout.
--
-- A script changes a body by replacing raw fields (t.f) and re-joining them: only the
-- fields that change are re-encoded, and the payload is never parsed.
--
-- Standard KEYS of every state-changing script:
--   KEYS[1] pool  KEYS[2] delayed  KEYS[3] reserved  KEYS[4] dead  KEYS[5] done (LIST, in order of
--   finishing: purge takes from its head)  KEYS[6] counts

-- @include patch
-- @include parked

-- The parked counts key (parkedh) of a script that may take a pending task out of
-- `delayed` (reschedule.lua sets it): unindex checks whether the task was parked.
local parkedCountsKey = nil

-- Memoised per call: a batch encodes the same now / reservedUntil for every task.
local b36memo = {}
local function b36(n)
  local hit = b36memo[n]
  if not hit then
    hit = base36(n)
    b36memo[n] = hit
  end
  return hit
end


-- The seq of a member. Compared as numbers: Lua compares strings with strcoll, and
-- Redis sets the collation locale from the environment.
local function seqOf(m)
  local n = 0
  for i = 1, 7 do n = n * 256 + string.byte(m, i) end
  return n
end

local HEADER = '^([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^|]*)|()'

local function decode(body)
  local f = { string.match(body, HEADER) }
  local t = { f = f, s = f[1], topic = f[12], body = body, tail = f[14] }
  f[14] = nil
  -- errLen[,url[,trace]]: split, so setError rewrites errLen alone and encode() joins the
  -- rest back as it was.
  local comma = string.find(f[13], ',', 1, true)
  if comma then
    local rest = string.sub(f[13], comma + 1)
    f[14] = rest
    f[13] = string.sub(f[13], 1, comma - 1)
    local url = string.match(rest, '^[^,]*')
    if url ~= '' then t.url = url end
  end
  t.attempts = tonumber(f[2], 36)
  t.runAt = tonumber(f[3], 36)
  t.max = tonumber(f[4], 36)
  t.ttr = tonumber(f[5], 36)
  t.seq = tonumber(f[10], 36)
  if f[9] ~= '' then t.reservedUntil = tonumber(f[9], 36) end
  if f[11] ~= '' then t.receipt = f[11] end
  return t
end

-- The lane a task's timers and ready list are filed under: its topic, or its topic's push
-- lane '~push:<topic>' for a task with its own push url (core/task/model.ts laneOf; the
-- Pusher alone consumes it, under the topic's pause and limits).
local function laneOf(t)
  if t.url then return '~push:' .. t.topic end
  return t.topic
end

-- Field 13's lengths: the error's and the history's bytes, and the history's entries.
local function lengthsOf(t)
  local e, h, c = string.match(t.f[13], '^([^:]*):?([^:]*):?([^:]*)$')
  return tonumber(e, 36) or 0, tonumber(h, 36) or 0, c
end

local function payloadOf(t)
  local errLen, histLen = lengthsOf(t)
  return string.sub(t.body, t.tail + errLen + histLen)
end

-- Setters keep the raw field and the number in step.
local function setRunAt(t, runAt) t.runAt = runAt; t.f[3] = b36(runAt) end
local function setAttempts(t, n) t.attempts = n; t.f[2] = b36(n) end
local function setReservation(t, receipt, reservedUntil)
  t.receipt = receipt
  t.reservedUntil = reservedUntil
  t.f[11] = receipt or ''
  if reservedUntil then t.f[9] = b36(reservedUntil) else t.f[9] = '' end
end
-- Replaces the error text; the history stays.
local function setError(t, err)
  local errLen, histLen, count = lengthsOf(t)
  local rest = string.sub(t.body, t.tail + errLen)
  local f = ''
  if err then f = b36(#err) end
  if histLen > 0 then f = f .. ':' .. b36(histLen) .. ':' .. count end
  t.f[13] = f
  t.newTail = (err or '') .. rest
end

-- Appends the attempt that a settlement at `now` ends to the history (after setError, if any).
local function addAttempt(t, now, outcome, err)
  local started36 = t.f[8]
  if started36 == '' then started36 = t.f[7] end
  local entry = t.f[2] .. ',' .. started36 .. ',' .. b36(math.max(0, now - tonumber(started36, 36))) .. ',' .. outcome .. ',' .. (err or '')
  local tail = t.newTail
  if not tail then tail = string.sub(t.body, t.tail) end
  t.f[13], t.newTail = appendAttempt(t.f[13], tail, entry)
end

local function encode(t)
  local tail = t.newTail
  if not tail then tail = string.sub(t.body, t.tail) end
  return table.concat(t.f, ',') .. '|' .. tail
end

-- Computed once per loaded task (a state change removes and adds the same member).
local function member(t, id)
  local m = t.m
  if not m then
    m = seqBytes(t.seq) .. id
    t.m = m
  end
  return m
end

-- Counter deltas are summed per call and written once (flushCounts), so a batch of a
-- thousand tasks of one topic costs one HINCRBY, not a thousand.
local deltas = {}
local function count(state, topic, delta)
  local field = state .. topic
  deltas[field] = (deltas[field] or 0) + delta
end

local function flushCounts()
  for field, delta in pairs(deltas) do
    if delta ~= 0 then
      -- Drop zero counters so stats() stays O(live topics).
      if redis.call('HINCRBY', KEYS[6], field, delta) == 0 then redis.call('HDEL', KEYS[6], field) end
    end
  end
  deltas = {}
end

-- Batched writes: unpark.lua queues its arguments with push() and sends
-- them with sendChunked(), one command per key instead of one per task.
local function push(list, a, b)
  local n = #list
  list[n + 1] = a
  if b ~= nil then list[n + 2] = b end
end

local function sendChunked(cmd, key, args)
  -- unpack has a C stack limit, hence chunks of 400 arguments.
  for from = 1, #args, 400 do
    redis.call(cmd, key, unpack(args, from, math.min(from + 399, #args)))
  end
end

local function zrem(k, m) redis.call('ZREM', KEYS[k], m) end

local function zadd(k, score, m) redis.call('ZADD', KEYS[k], score, m) end

-- The index (ZSET) that holds a task in its state.
local function unindex(t, id)
  if t.s == 'p' then
    assert(parkedCountsKey, 'a pending task leaves delayed: the script must set parkedCountsKey')
    parkedGone(KEYS[2], parkedCountsKey, member(t, id), t.runAt, t.topic)
  elseif t.s == 'r' then zrem(3, member(t, id))
  elseif t.s == 'd' then zrem(4, id) end
  -- Completed and cancelled tasks never change again: they leave `done` only by purge.
end

local function index(t, id, now)
  if t.s == 'p' then zadd(2, t.runAt, member(t, id))
  elseif t.s == 'r' then zadd(3, t.reservedUntil, member(t, id))
  elseif t.s == 'd' then zadd(4, now, id)
  else redis.call('RPUSH', KEYS[5], id) end
end

-- Leaves the old state's index and counter; the caller sets fields, then calls save().
local function leave(t, id)
  unindex(t, id)
  count(t.s, t.topic, -1)
end

local function save(t, id, state, now, now36)
  t.s = state
  t.f[1] = state
  t.f[8] = now36
  count(state, t.topic, 1)
  local body = encode(t)
  redis.call('HSET', KEYS[1], id, body)
  index(t, id, now)
  return body
end

local function load(id)
  local body = redis.call('HGET', KEYS[1], id)
  if not body then return nil end
  return decode(body)
end

-- A failed or expired attempt: dead when out of attempts, else pending at retryAt.
-- Returns { 'dead', 0, 0, lane, topic } or { 'retrying', runAt, seq, lane, topic } (topic: the
-- task's own, for the engine's counters; lane: its timers', laneOf).
-- outcome and histErr: the history entry's (histErr: err, or its start the entry keeps).
local function settleFailure(t, id, now, now36, retryAt, err, outcome, histErr)
  leave(t, id)
  setReservation(t, nil, nil)
  setError(t, err)
  -- Before save() sets updatedAt: it is still the reservation's time, the attempt's start.
  addAttempt(t, now, outcome, histErr)
  if t.attempts >= t.max then
    save(t, id, 'd', now, now36)
    return { 'dead', 0, 0, laneOf(t), t.topic }
  end
  setRunAt(t, retryAt)
  save(t, id, 'p', now, now36)
  return { 'retrying', t.runAt, t.seq, laneOf(t), t.topic }
end
