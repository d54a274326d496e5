-- parked-init: makes sure a shard's parked counts (includes/parked.lua) say which park
-- buckets they count, once per shard; every store that opens the namespace calls it
-- before it changes anything.
-- KEYS[1] parkedh, KEYS[2] parked
-- ARGV: none
-- Returns: the first park bucket counted ('from')
--
-- A namespace whose shard has no park list counts from bucket 0: everything. One that
-- parked tasks before the counts existed (a delayq without them wrote it) counts from one
-- past its last park list: the tasks in those lists are not in the counts, and never
-- leave them either (every script counts a task only from 'from' on); dueHistogram reads
-- those lists themselves until unpark.lua has drained them. No pass over the old lists is
-- needed, and none blocks Redis.
-- Not under waitReplicas (script-runner.ts WAITED): a store opens whatever the replicas do, and
-- the marker, if a failover lost it, is set again by the next open.
local from = redis.call('HGET', KEYS[1], 'from')
if from then return tonumber(from) end
local last = redis.call('ZRANGE', KEYS[2], -1, -1)[1]
local first = 0
if last then first = tonumber(last) + 1 end
redis.call('HSET', KEYS[1], 'from', first)
return first
