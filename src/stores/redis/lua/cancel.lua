-- cancel: pending -> cancelled, for each id.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, ARGV[2..] ids (the caller keeps them <= 500)
-- Returns: one character per id, in order: c cancelled, n not_found, p not_pending (one
-- string, not an array: a call of 500 ids answers with 500 bytes)
--
-- Without the codec include, on purpose: concurrent cancels of one shard come here a few
-- at a time, so the fixed cost of a call matters. Each body is patched with one pattern
-- (state -> 'x', updatedAt -> now; the layout of includes/codec.lua, payload untouched),
-- and the writes go out as one HSET, ZREM and RPUSH plus two HINCRBY per topic.
-- @include patch
local n = #ARGV - 1
local out = {}
if n == 0 then return '' end
local now36 = base36(tonumber(ARGV[1]))
local bodies = redis.call('HMGET', KEYS[1], unpack(ARGV, 2))
local hset, zrem, done, deltas, seen = {}, {}, {}, {}, {}
for i = 1, n do
  local id, body = ARGV[i + 1], bodies[i]
  if seen[id] then
    out[i] = 'p'
  elseif not body then
    out[i] = 'n'
  else
    -- p | ,attempts,runAt,maxAttempts,ttrMs,backoff,createdAt, | updatedAt | ,reservedUntil,seq,receipt,topic,errLen|...
    local head, tail, seq, topic = string.match(body, '^p(,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,)[^,]*(,[^,]*,([^,]*),[^,]*,([^,]*),.*)$')
    if not head then
      out[i] = 'p'
    else
      seen[id] = true
      zrem[#zrem + 1] = seqBytes(tonumber(seq, 36)) .. id
      hset[#hset + 1] = id
      hset[#hset + 1] = 'x' .. head .. now36 .. tail
      done[#done + 1] = id
      deltas[topic] = (deltas[topic] or 0) + 1
      out[i] = 'c'
    end
  end
end
flushPatched(hset, 2, zrem, done, deltas, 'p', 'x')
return table.concat(out)
