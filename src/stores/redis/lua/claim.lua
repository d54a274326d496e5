-- claim: for each id pending with runAt <= now: -> reserved, attempts + 1, new receipt,
-- reservedUntil = now + ttr. Others are skipped.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, ARGV[2] ttr override ('' = the task's ttrMs), ARGV[3] receipt nonce, ARGV[4..] ids (<= 500)
-- Returns: flat { id, body } per claimed task, in input order.
-- @include codec
local now = tonumber(ARGV[1])
local now36 = b36(now)
local ttr = tonumber(ARGV[2])
local out = {}
deferWrites()
local bodies = {}
if #ARGV > 3 then bodies = redis.call('HMGET', KEYS[1], unpack(ARGV, 4)) end
for i = 4, #ARGV do
  local id = ARGV[i]
  local t = loadBody(id, bodies[i - 3])
  if t and t.s == 'p' and t.runAt <= now then
    table.insert(out, id)
    table.insert(out, reserve(t, id, now, now36, ttr, ARGV[3] .. b36(i)))
  end
end
flushWrites()
flushCounts()
return out
