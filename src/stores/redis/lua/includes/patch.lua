-- Small helpers shared by every script that writes packed bodies or index members: the
-- lean scripts (cancel.lua, ack.lua, which patch bodies with one pattern each) include
-- this file alone; codec.lua includes it too. Keep it small: what a script includes is
-- built again on every call.

local B36 = '0123456789abcdefghijklmnopqrstuvwxyz'

-- n >= 0 in base 36, as codec.ts writes integers.
local function base36(n)
  if n < 36 then return string.sub(B36, n + 1, n + 1) end
  local out, i = {}, 0
  while n > 0 do
    local d = n % 36
    i = i + 1
    out[i] = string.sub(B36, d + 1, d + 1)
    n = (n - d) / 36
  end
  return string.reverse(table.concat(out))
end

-- A task's priority (ADR 0057): the body's 16th header field, there only for a task of a
-- priority other than 0 (codec.ts), so any other body is 0. Decimal, -100..100.
local PRIORITY_PATTERN = '^[^,|]*' .. string.rep(',[^,|]*', 14) .. ',(-?%d+)|'
local function priorityOf(body)
  -- Most bodies end their header in an empty field (no error, url, trace or priority): the
  -- byte before the first '|' is a comma, found at memchr speed. The full pattern costs
  -- ~0.9 us a body, run on every task promote.lua moves (~0.2 us this way).
  local bar = string.find(body, '|', 1, true)
  if bar == nil or string.byte(body, bar - 1) == 44 then return 0 end
  local p = string.match(body, PRIORITY_PATTERN)
  if p then return tonumber(p) end
  return 0
end

-- The score of a task of priority p (not 0) due at runAt in its topic's ranked ready set:
-- higher priorities first (the lowest score), runAt order within one. Exact in a double:
-- at most 200e13 + a runAt below 2^42.
local function rankedScore(p, runAt)
  return (100 - p) * 1e13 + runAt
end
-- Scores below it are of priorities above 0.
local RANKED_ABOVE_ZERO = 100 * 1e13

-- 7 bytes big-endian: members with equal scores sort by seq (ZSET ties sort by member bytes).
-- struct (bundled with Redis' Lua) packs in C: half the time of splitting the bytes in Lua,
-- on every member a script writes. Exact for seq < 2^53, far beyond any real counter.
local pack = struct.pack
local function seqBytes(n)
  return pack('>I7', n)
end

-- The writes of a lean script, in chunks (unpack's C stack limit): the patched bodies, the
-- members leaving index KEYS[indexKey], the ids appended to `done`, and per topic the count
-- moved from state `from` to state `to`.
local function flushPatched(hset, indexKey, zrem, done, moved, from, to)
  if #hset == 0 then return end
  for at = 1, #hset, 400 do redis.call('HSET', KEYS[1], unpack(hset, at, math.min(at + 399, #hset))) end
  for at = 1, #zrem, 400 do redis.call('ZREM', KEYS[indexKey], unpack(zrem, at, math.min(at + 399, #zrem))) end
  for at = 1, #done, 400 do redis.call('RPUSH', KEYS[5], unpack(done, at, math.min(at + 399, #done))) end
  for topic, c in pairs(moved) do
    -- Drop zero counters so stats() stays O(live topics).
    if redis.call('HINCRBY', KEYS[6], from .. topic, -c) == 0 then redis.call('HDEL', KEYS[6], from .. topic) end
    redis.call('HINCRBY', KEYS[6], to .. topic, c)
  end
end

-- The attempt history (core/task/history.ts) lives in the body: field 13 is
-- 'errLen[:histLen:count]' and the text after '|' is err .. history .. payload. The history
-- is `count` entries, oldest first, each '<len>:<attempt>,<startedAt>,<durationMs>,<outcome>,<error>'
-- (len: the bytes after its ':'; numbers in base 36). A body without ':' in field 13 (written
-- before history was kept) has none. Appends `entry` (the part after '<len>:') to the body
-- whose field 13 is `errField` and whose text after '|' is `after`, dropping the oldest
-- beyond 10 (HISTORY_LIMIT); returns the new field 13 and the new text after '|'.
local function appendAttempt(errField, after, entry)
  local framed = base36(#entry) .. ':' .. entry
  -- No error and no history (a first attempt, acked): the entry goes in front of the payload.
  if errField == '' then return ':' .. base36(#framed) .. ':1', framed .. after end
  local e, h, c = string.match(errField, '^([^:]*):?([^:]*):?([^:]*)$')
  local errLen = tonumber(e, 36) or 0
  local histLen = tonumber(h, 36) or 0
  local count = tonumber(c, 36) or 0
  local hist = string.sub(after, errLen + 1, errLen + histLen)
  if count >= 10 then
    local n, at = string.match(hist, '^([^:]*):()')
    hist = string.sub(hist, at + tonumber(n, 36))
    count = count - 1
  end
  hist = hist .. framed
  return e .. ':' .. base36(#hist) .. ':' .. base36(count + 1), string.sub(after, 1, errLen) .. hist .. string.sub(after, errLen + histLen + 1)
end
