-- schedule: creates each task that does not exist yet (create-if-absent, so a retried
-- call never makes two), pending, attempts 0.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now; then per task 7 values: id, topic, payload, runAt, maxAttempts, ttrMs, backoff, seq
--   (8 values: the last is the task's global seq, assigned by the caller in input order)
-- Returns: flat { created (1|0), runAt, seq } per task, in input order.
-- @include codec
local now = tonumber(ARGV[1])
local out = {}
for i = 2, #ARGV, 8 do
  local id = ARGV[i]
  local body = redis.call('HGET', KEYS[1], id)
  if body then
    local t = decode(body)
    table.insert(out, 0)
    table.insert(out, t.runAt)
    table.insert(out, t.seq)
  else
    local t = {
      s = 'p', attempts = 0, topic = ARGV[i + 1], payload = ARGV[i + 2], runAt = tonumber(ARGV[i + 3]),
      max = tonumber(ARGV[i + 4]), ttr = tonumber(ARGV[i + 5]), backoff = ARGV[i + 6], seq = tonumber(ARGV[i + 7]),
      createdAt = now, updatedAt = now,
    }
    save(t, id, 'p')
    table.insert(out, 1)
    table.insert(out, t.runAt)
    table.insert(out, t.seq)
  end
end
return out
