-- ack: reserved -> completed, only with the current receipt, for each (id, receipt). A
-- completed task keeps the receipt that completed it, so that ack sent again (its reply was
-- lost) answers 'already acked' while the task is kept (until purge); any other receipt is
-- 'stale'.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, then pairs: id, receipt (the caller keeps them <= 500)
-- Returns: { codes, topic... }: codes has one character per pair, in order: a acked (this
-- call completed the task), r already acked (the ack that completed it, sent again: not
-- counted twice), n not_found, s stale; then the topic of each acked task, in the order of
-- its 'a' (the engine counts each ack under its task's own topic). ADR 0039.
--
-- Without the codec include, on purpose, like cancel.lua: an ack is on every delivery's
-- path and most calls carry a few acks, so the include's fixed cost per call (its helpers
-- and tables, ~9 us) mattered more than its work. Each body is patched with one pattern
-- (state -> 'c', updatedAt -> now, reservedUntil cleared, receipt kept, the attempt's
-- 'acked' entry appended to its history (appendAttempt; it started at the reservation, the
-- updatedAt it replaces); the layout of includes/codec.lua, payload untouched); the writes
-- go out as one HSET, ZREM and RPUSH plus two HINCRBY per topic. Keep the pattern in step
-- with codec.lua. ADR 0041.
-- @include patch
local out, reply = {}, { '' }
local n = (#ARGV - 1) / 2
if n < 1 then return reply end
local now = tonumber(ARGV[1])
local now36 = base36(now)
local ids = {}
for k = 1, n do ids[k] = ARGV[2 * k] end
local bodies = redis.call('HMGET', KEYS[1], unpack(ids))
local hset, zrem, done, deltas, acked = {}, {}, {}, {}, {}
for k = 1, n do
  local id, receipt, body = ids[k], ARGV[2 * k + 1], bodies[k]
  if acked[id] then
    -- Acked earlier in this call: the task is completed now, by that receipt.
    out[k] = acked[id] == receipt and 'r' or 's'
  elseif not body then
    out[k] = 'n'
  else
    -- r | ,attempts,runAt,maxAttempts,ttrMs,backoff,createdAt, | updatedAt | ,reservedUntil, | seq | , | receipt | , | topic | , | errField | [,url[,trace]] | '|' | err history payload
    local head, attempts36, updated36, seq, held, topic, errField, url, after =
      string.match(body, '^r(,([^,]*),[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,)([^,]*),[^,]*,([^,]*),([^,]*),([^,]*),([^,|]*)([^|]*)|(.*)$')
    if not head or held ~= receipt then
      -- c | ,attempts,...,createdAt, | updatedAt,reservedUntil, | seq | , | receipt | , ...: the ack that completed it?
      local completedBy = string.match(body, '^c,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,([^,]*),')
      out[k] = (completedBy ~= nil and completedBy ~= '' and completedBy == receipt) and 'r' or 's'
    else
      acked[id] = receipt
      zrem[#zrem + 1] = seqBytes(tonumber(seq, 36)) .. id
      hset[#hset + 1] = id
      -- A reserved task's updatedAt is its reservation's time (reservation.lua sets it).
      if updated36 == '' then updated36 = now36 end
      local startedAt = tonumber(updated36, 36)
      errField, after = appendAttempt(errField, after, attempts36 .. ',' .. updated36 .. ',' .. base36(math.max(0, now - startedAt)) .. ',acked,')
      hset[#hset + 1] = 'c' .. head .. now36 .. ',,' .. seq .. ',' .. receipt .. ',' .. topic .. ',' .. errField .. url .. '|' .. after
      done[#done + 1] = id
      deltas[topic] = (deltas[topic] or 0) + 1
      out[k] = 'a'
      reply[#done + 1] = topic
    end
  end
end
flushPatched(hset, 3, zrem, done, deltas, 'r', 'c')
reply[1] = table.concat(out)
return reply
