-- purge: deletes up to `limit` completed / cancelled tasks last updated before `before`.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] before, ARGV[2] limit (the caller keeps it <= 1,000)
-- Returns: the number deleted
-- @include codec
local ids = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  local t = load(id)
  if t then
    count(t.s, t.topic, -1)
    redis.call('HDEL', KEYS[1], id)
  end
  redis.call('ZREM', KEYS[5], id)
end
flushCounts()
return #ids
