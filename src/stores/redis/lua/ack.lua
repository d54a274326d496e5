-- ack: reserved -> completed, only with the current receipt, for each (id, receipt).
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, then pairs: id, receipt (the caller keeps them <= 500)
-- Returns: per pair, in order: 'acked' | 'not_found' | 'stale'
--
-- Without the codec include, on purpose, like cancel.lua: an ack is on every delivery's
-- path and most calls carry a few acks, so the include's fixed cost per call (its helpers
-- and tables, ~9 us) mattered more than its work. Each body is patched with one pattern
-- (state -> 'c', updatedAt -> now, reservedUntil and receipt cleared; the layout of
-- includes/codec.lua, payload untouched); the writes go out as one HSET, ZREM and RPUSH
-- plus two HINCRBY per topic. Keep the pattern in step with codec.lua.
local out = {}
local n = (#ARGV - 1) / 2
if n < 1 then return out end
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
local ids = {}
for k = 1, n do ids[k] = ARGV[2 * k] end
local bodies = redis.call('HMGET', KEYS[1], unpack(ids))
local hset, zrem, done, deltas, acked = {}, {}, {}, {}, {}
for k = 1, n do
  local id, receipt, body = ids[k], ARGV[2 * k + 1], bodies[k]
  if acked[id] then
    -- Acked earlier in this call: the task is completed now.
    out[k] = 'stale'
  elseif not body then
    out[k] = 'not_found'
  else
    -- r | ,attempts,runAt,maxAttempts,ttrMs,backoff,createdAt, | updatedAt,reservedUntil, | seq | , | receipt | , | topic | ,errLen|...
    local head, seq, held, topic, tail = string.match(body, '^r(,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,)[^,]*,[^,]*,([^,]*),([^,]*),([^,]*)(,.*)$')
    if not head or held ~= receipt then
      out[k] = 'stale'
    else
      acked[id] = true
      -- the reservation's member: seq as 7 bytes big-endian, then the id (codec.lua seqBytes)
      local s = tonumber(seq, 36)
      local b7 = s % 256; s = (s - b7) / 256
      local b6 = s % 256; s = (s - b6) / 256
      local b5 = s % 256; s = (s - b5) / 256
      local b4 = s % 256; s = (s - b4) / 256
      local b3 = s % 256; s = (s - b3) / 256
      local b2 = s % 256; s = (s - b2) / 256
      zrem[#zrem + 1] = schar(s % 256, b2, b3, b4, b5, b6, b7) .. id
      hset[#hset + 1] = id
      hset[#hset + 1] = 'c' .. head .. now36 .. ',,' .. seq .. ',,' .. topic .. tail
      done[#done + 1] = id
      deltas[topic] = (deltas[topic] or 0) + 1
      out[k] = 'acked'
    end
  end
end
if #hset > 0 then
  for from = 1, #hset, 400 do redis.call('HSET', KEYS[1], unpack(hset, from, math.min(from + 399, #hset))) end
  for from = 1, #zrem, 400 do redis.call('ZREM', KEYS[3], unpack(zrem, from, math.min(from + 399, #zrem))) end
  for from = 1, #done, 400 do redis.call('RPUSH', KEYS[5], unpack(done, from, math.min(from + 399, #done))) end
  for topic, c in pairs(deltas) do
    if redis.call('HINCRBY', KEYS[6], 'r' .. topic, -c) == 0 then redis.call('HDEL', KEYS[6], 'r' .. topic) end
    redis.call('HINCRBY', KEYS[6], 'c' .. topic, c)
  end
end
return out
