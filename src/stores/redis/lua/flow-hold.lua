-- flow-hold: each delivery given holds a slot of its topic until its time (a renewed
-- reservation keeps its slot to its new end; the reservations in flight when a concurrency
-- is set start holding theirs). Upserts: a delivery's slot gets the time given.
-- KEYS[1] slots (ZSET member -> held until)
-- ARGV: pairs key (the delivery's receipt), until
-- Returns: 1
for i = 1, #ARGV, 2 do redis.call('ZADD', KEYS[1], tonumber(ARGV[i + 1]), ARGV[i]) end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then redis.call('PEXPIREAT', KEYS[1], tonumber(last[2]) + 60000) end
return 1
