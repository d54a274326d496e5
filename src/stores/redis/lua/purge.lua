-- purge: deletes completed / cancelled tasks last updated before `before`, oldest first,
-- at most `limit`. `done` lists them in the order they finished, so purge takes from its
-- head and stops at the first one too recent (one finished a few ms out of order, by
-- another process, waits for the next purge).
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] before, ARGV[2] limit (the caller keeps it <= 1,000)
-- Returns: the number deleted
-- @include codec
local before, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local ids = redis.call('LRANGE', KEYS[5], 0, limit - 1)
local deleted, popped = 0, 0
for _, id in ipairs(ids) do
  local t = load(id)
  if t and (t.s == 'c' or t.s == 'x') then
    local updatedAt = tonumber(t.f[8], 36)
    if updatedAt >= before then break end
    count(t.s, t.topic, -1)
    redis.call('HDEL', KEYS[1], id)
    deleted = deleted + 1
  end
  popped = popped + 1
end
if popped > 0 then redis.call('LTRIM', KEYS[5], popped, -1) end
flushCounts()
return deleted
