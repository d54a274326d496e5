-- reserved-of: the reservations of one topic in force in this shard, by receipt: reserved,
-- ending after `now` and at or before `until` (the members of `reserved` in that range, their
-- bodies read for the topic). A topic's concurrency set on a busy fleet counts them (topic-limits.ts).
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, ARGV[2] until, ARGV[3] topic
-- Returns: { receipt, reservedUntil, ... }
local now, untilMs, topic = ARGV[1], ARGV[2], ARGV[3]
local members = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. now, untilMs, 'WITHSCORES')
local out = {}
for at = 1, #members, 800 do
  local ids, untils = {}, {}
  for i = at, math.min(at + 799, #members), 2 do
    ids[#ids + 1] = string.sub(members[i], 8)
    untils[#untils + 1] = members[i + 1]
  end
  local bodies = redis.call('HMGET', KEYS[1], unpack(ids))
  for j = 1, #ids do
    local body = bodies[j]
    if body then
      -- s,attempts,runAt,maxAttempts,ttrMs,backoff,createdAt,updatedAt,reservedUntil,seq,receipt,topic,...
      local s, receipt, t = string.match(body, '^(%a),[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,([^,]*),([^,|]*)')
      if s == 'r' and t == topic then
        out[#out + 1] = receipt
        out[#out + 1] = untils[j]
      end
    end
  end
end
return out
