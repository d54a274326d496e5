-- heartbeat: a process is alive until a time; the run-out heartbeats of others go, with their
-- join times. Its join time (now at its first heartbeat) is kept while it stays alive, so the
-- processes agree on who joined first (src/coordination/lease-keeper.ts fairShare).
-- KEYS[1] members (score: heartbeat expiry), KEYS[2] joined (score: first heartbeat)
-- ARGV[1] owner id, ARGV[2] now, ARGV[3] alive until
-- Returns: {live, rank}: the processes alive, this one included, and how many of the others
-- joined before this one. ZRANGE orders `joined` by time, then by owner id as bytes, as
-- PostgreSQL's heartbeat.sql does. A live process with no join time (written by a delayq
-- before join times) counts as before every other.
local owner = ARGV[1]
redis.call('ZADD', KEYS[1], ARGV[3], owner)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2])
redis.call('ZADD', KEYS[2], 'NX', ARGV[2], owner)
local live = redis.call('ZCARD', KEYS[1])
local timed, before, seen = 0, 0, false
for _, other in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if other == owner then
    seen = true
  elseif redis.call('ZSCORE', KEYS[1], other) then
    timed = timed + 1
    if not seen then before = before + 1 end
  else
    -- Its heartbeat ran out (or it left): it joins anew if it comes back.
    redis.call('ZREM', KEYS[2], other)
  end
end
return {live, live - 1 - timed + before}
