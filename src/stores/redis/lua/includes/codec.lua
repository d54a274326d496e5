-- Shared helpers, inlined into each script by `-- @include codec` (scripts.ts).
--
-- Task body (one HASH field per task, value packed to keep Redis memory small):
--   s,attempts,runAt,maxAttempts,ttrMs,backoff,createdAt,updatedAt,reservedUntil,seq,receipt,topicLen,errLen|topic err payload
-- Integers are base 36; backoff is opaque "baseMs:factor:maxMs:jitter"; empty
-- reservedUntil / receipt / errLen mean null. State chars: p pending, r reserved,
-- c completed, x cancelled, d dead. Ids and topics never contain ',' or '|'.
--
-- Standard KEYS of every state-changing script:
--   KEYS[1] pool  KEYS[2] delayed  KEYS[3] reserved  KEYS[4] dead  KEYS[5] done  KEYS[6] counts

local B36 = '0123456789abcdefghijklmnopqrstuvwxyz'

local function b36(n)
  if n == 0 then return '0' end
  local out = {}
  while n > 0 do
    local d = n % 36
    table.insert(out, 1, string.sub(B36, d + 1, d + 1))
    n = (n - d) / 36
  end
  return table.concat(out)
end

local function unb36(s)
  return tonumber(s, 36)
end

-- 7 bytes big-endian: members with equal scores sort by seq (ZSET ties sort by member bytes).
local function seqBytes(n)
  local bytes = {}
  for i = 7, 1, -1 do
    local b = n % 256
    bytes[i] = string.char(b)
    n = (n - b) / 256
  end
  return table.concat(bytes)
end

-- The seq of a member. Compared as numbers: Lua compares strings with strcoll, and
-- Redis sets the collation locale from the environment.
local function seqOf(m)
  local n = 0
  for i = 1, 7 do n = n * 256 + string.byte(m, i) end
  return n
end

local function member(t, id)
  return seqBytes(t.seq) .. id
end

local function decode(body)
  local bar = string.find(body, '|', 1, true)
  local f = {}
  local start = 1
  for i = 1, 13 do
    local comma = string.find(body, ',', start, true)
    if comma == nil or comma > bar then
      f[i] = string.sub(body, start, bar - 1)
      break
    end
    f[i] = string.sub(body, start, comma - 1)
    start = comma + 1
  end
  local t = {
    s = f[1], attempts = unb36(f[2]), runAt = unb36(f[3]), max = unb36(f[4]), ttr = unb36(f[5]),
    backoff = f[6], createdAt = unb36(f[7]), updatedAt = unb36(f[8]), seq = unb36(f[10]),
  }
  if f[9] ~= '' then t.reservedUntil = unb36(f[9]) end
  if f[11] ~= '' then t.receipt = f[11] end
  local topicLen = unb36(f[12])
  t.topic = string.sub(body, bar + 1, bar + topicLen)
  local pos = bar + topicLen + 1
  if f[13] ~= nil and f[13] ~= '' then
    local errLen = unb36(f[13])
    t.err = string.sub(body, pos, pos + errLen - 1)
    pos = pos + errLen
  end
  t.payload = string.sub(body, pos)
  return t
end

local function encode(t)
  local head = table.concat({
    t.s, b36(t.attempts), b36(t.runAt), b36(t.max), b36(t.ttr), t.backoff, b36(t.createdAt), b36(t.updatedAt),
    t.reservedUntil and b36(t.reservedUntil) or '', b36(t.seq), t.receipt or '', b36(#t.topic), t.err and b36(#t.err) or '',
  }, ',')
  return head .. '|' .. t.topic .. (t.err or '') .. t.payload
end

local function count(key, state, topic, delta)
  local n = redis.call('HINCRBY', key, state .. topic, delta)
  -- Drop zero counters so stats() stays O(live topics).
  if n == 0 then redis.call('HDEL', key, state .. topic) end
end

-- The index (ZSET) that holds a task in its state.
local function unindex(t, id)
  if t.s == 'p' then redis.call('ZREM', KEYS[2], member(t, id))
  elseif t.s == 'r' then redis.call('ZREM', KEYS[3], member(t, id))
  elseif t.s == 'd' then redis.call('ZREM', KEYS[4], id)
  else redis.call('ZREM', KEYS[5], id) end
end

local function index(t, id)
  if t.s == 'p' then redis.call('ZADD', KEYS[2], t.runAt, member(t, id))
  elseif t.s == 'r' then redis.call('ZADD', KEYS[3], t.reservedUntil, member(t, id))
  elseif t.s == 'd' then redis.call('ZADD', KEYS[4], t.updatedAt, id)
  else redis.call('ZADD', KEYS[5], t.updatedAt, id) end
end

-- Leaves the old state's index and counter; the caller sets fields, then calls save().
local function leave(t, id, now)
  unindex(t, id)
  count(KEYS[6], t.s, t.topic, -1)
  t.updatedAt = now
end

local function save(t, id, state)
  t.s = state
  count(KEYS[6], state, t.topic, 1)
  redis.call('HSET', KEYS[1], id, encode(t))
  index(t, id)
end

local function load(id)
  local body = redis.call('HGET', KEYS[1], id)
  if not body then return nil end
  return decode(body)
end

-- A failed or expired attempt: dead when out of attempts, else pending at retryAt.
-- Returns { 'dead' } or { 'retrying', runAt, seq, topic }.
local function settleFailure(t, id, now, retryAt, err)
  leave(t, id, now)
  t.receipt = nil
  t.reservedUntil = nil
  t.err = err
  if t.attempts >= t.max then
    save(t, id, 'd')
    return { 'dead' }
  end
  t.runAt = retryAt
  save(t, id, 'p')
  return { 'retrying', t.runAt, t.seq, t.topic }
end

-- Reserves a loaded pending task (the caller checked state and runAt). Returns its new body.
local function reserve(t, id, now, ttrOverride, receipt)
  leave(t, id, now)
  t.attempts = t.attempts + 1
  t.receipt = t.attempts .. '.' .. receipt
  t.reservedUntil = now + (ttrOverride or t.ttr)
  save(t, id, 'r')
  return encode(t)
end
