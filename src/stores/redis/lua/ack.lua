-- ack: reserved -> completed, only with the current receipt, for each (id, receipt). A
-- completed task keeps the receipt that completed it, so that ack sent again (its reply was
-- lost) answers 'acked' while the task is kept (until purge); any other receipt is 'stale'.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, then pairs: id, receipt (the caller keeps them <= 500)
-- Returns: per pair, in order: 'acked' | 'not_found' | 'stale'
--
-- Without the codec include, on purpose, like cancel.lua: an ack is on every delivery's
-- path and most calls carry a few acks, so the include's fixed cost per call (its helpers
-- and tables, ~9 us) mattered more than its work. Each body is patched with one pattern
-- (state -> 'c', updatedAt -> now, reservedUntil cleared, receipt kept; the layout of
-- includes/codec.lua, payload untouched); the writes go out as one HSET, ZREM and RPUSH
-- plus two HINCRBY per topic. Keep the pattern in step with codec.lua.
-- @include patch
local out = {}
local n = (#ARGV - 1) / 2
if n < 1 then return out end
local now36 = base36(tonumber(ARGV[1]))
local ids = {}
for k = 1, n do ids[k] = ARGV[2 * k] end
local bodies = redis.call('HMGET', KEYS[1], unpack(ids))
local hset, zrem, done, deltas, acked = {}, {}, {}, {}, {}
for k = 1, n do
  local id, receipt, body = ids[k], ARGV[2 * k + 1], bodies[k]
  if acked[id] then
    -- Acked earlier in this call: the task is completed now, by that receipt.
    out[k] = acked[id] == receipt and 'acked' or 'stale'
  elseif not body then
    out[k] = 'not_found'
  else
    -- r | ,attempts,runAt,maxAttempts,ttrMs,backoff,createdAt, | updatedAt,reservedUntil, | seq | , | receipt | , | topic | ,errLen|...
    local head, seq, held, topic, tail = string.match(body, '^r(,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,)[^,]*,[^,]*,([^,]*),([^,]*),([^,]*)(,.*)$')
    if not head or held ~= receipt then
      -- c | ,attempts,...,createdAt, | updatedAt,reservedUntil, | seq | , | receipt | , ...: the ack that completed it?
      local completedBy = string.match(body, '^c,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,([^,]*),')
      out[k] = (completedBy ~= nil and completedBy ~= '' and completedBy == receipt) and 'acked' or 'stale'
    else
      acked[id] = receipt
      zrem[#zrem + 1] = seqBytes(tonumber(seq, 36)) .. id
      hset[#hset + 1] = id
      hset[#hset + 1] = 'c' .. head .. now36 .. ',,' .. seq .. ',' .. receipt .. ',' .. topic .. tail
      done[#done + 1] = id
      deltas[topic] = (deltas[topic] or 0) + 1
      out[k] = 'acked'
    end
  end
end
flushPatched(hset, 3, zrem, done, deltas, 'r', 'c')
return out
