-- schedule: creates each task that does not exist yet (HSETNX: create-if-absent, so a
-- retried call never makes two), pending, attempts 0. The caller packs the bodies.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now; then per task 5 values: id, packed body, runAt, seq (global, in input order), topic
-- Returns: flat { created (1|0), runAt, seq } per task, in input order (the existing
--   task's runAt and seq when not created).
-- @include codec
local out = {}
local zadd = {}
for i = 2, #ARGV, 5 do
  local id, runAt, seq = ARGV[i], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
  if redis.call('HSETNX', KEYS[1], id, ARGV[i + 1]) == 1 then
    table.insert(zadd, runAt)
    table.insert(zadd, seqBytes(seq) .. id)
    count('p', ARGV[i + 4], 1)
    table.insert(out, 1)
    table.insert(out, runAt)
    table.insert(out, seq)
  else
    local t = load(id)
    table.insert(out, 0)
    table.insert(out, t.runAt)
    table.insert(out, t.seq)
  end
end
-- One ZADD per 200 tasks instead of one each (unpack has a C stack limit, hence chunks).
for from = 1, #zadd, 400 do
  redis.call('ZADD', KEYS[2], unpack(zadd, from, math.min(from + 399, #zadd)))
end
flushCounts()
return out
