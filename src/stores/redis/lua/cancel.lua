-- cancel: pending -> cancelled, for each id.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, ARGV[2..] ids (the caller keeps them <= 500)
-- Returns: per id, in order: 'cancelled' | 'not_found' | 'not_pending'
--
-- Without the codec include, on purpose: concurrent cancels of one shard come here a few
-- at a time, so the fixed cost of a call matters. Each body is patched with one pattern
-- (state -> 'x', updatedAt -> now; the layout of includes/codec.lua, payload untouched),
-- and the writes go out as one HSET, ZREM and RPUSH plus two HINCRBY per topic.
local n = #ARGV - 1
local out = {}
if n == 0 then return out end
-- now in base 36, as codec.lua's b36 writes it
local B36 = '0123456789abcdefghijklmnopqrstuvwxyz'
local digits, m = {}, tonumber(ARGV[1])
while m > 0 do
  local d = m % 36
  table.insert(digits, 1, string.sub(B36, d + 1, d + 1))
  m = (m - d) / 36
end
local now36 = table.concat(digits)
if now36 == '' then now36 = '0' end
local schar = string.char
local bodies = redis.call('HMGET', KEYS[1], unpack(ARGV, 2))
local hset, zrem, done, deltas, seen = {}, {}, {}, {}, {}
for i = 1, n do
  local id, body = ARGV[i + 1], bodies[i]
  if seen[id] then
    out[i] = 'not_pending'
  elseif not body then
    out[i] = 'not_found'
  else
    -- p | ,attempts,runAt,maxAttempts,ttrMs,backoff,createdAt, | updatedAt | ,reservedUntil,seq,receipt,topic,errLen|...
    local head, tail, seq, topic = string.match(body, '^p(,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,)[^,]*(,[^,]*,([^,]*),[^,]*,([^,]*),.*)$')
    if not head then
      out[i] = 'not_pending'
    else
      seen[id] = true
      -- the index member: seq as 7 bytes big-endian, then the id (codec.lua seqBytes)
      local s = tonumber(seq, 36)
      local b7 = s % 256; s = (s - b7) / 256
      local b6 = s % 256; s = (s - b6) / 256
      local b5 = s % 256; s = (s - b5) / 256
      local b4 = s % 256; s = (s - b4) / 256
      local b3 = s % 256; s = (s - b3) / 256
      local b2 = s % 256; s = (s - b2) / 256
      zrem[#zrem + 1] = schar(s % 256, b2, b3, b4, b5, b6, b7) .. id
      hset[#hset + 1] = id
      hset[#hset + 1] = 'x' .. head .. now36 .. tail
      done[#done + 1] = id
      deltas[topic] = (deltas[topic] or 0) + 1
      out[i] = 'cancelled'
    end
  end
end
if #hset > 0 then
  for from = 1, #hset, 400 do redis.call('HSET', KEYS[1], unpack(hset, from, math.min(from + 399, #hset))) end
  for from = 1, #zrem, 400 do redis.call('ZREM', KEYS[2], unpack(zrem, from, math.min(from + 399, #zrem))) end
  for from = 1, #done, 400 do redis.call('RPUSH', KEYS[5], unpack(done, from, math.min(from + 399, #done))) end
  for topic, k in pairs(deltas) do
    if redis.call('HINCRBY', KEYS[6], 'p' .. topic, -k) == 0 then redis.call('HDEL', KEYS[6], 'p' .. topic) end
    redis.call('HINCRBY', KEYS[6], 'x' .. topic, k)
  end
end
return out
