-- flow-bind: ends an admission (flow-admit.lua): its unused tokens go back to the bucket
-- (never past burst), and its slots under `holder`, if still held, become one slot per
-- delivery, each held until its reservation runs out.
-- KEYS[1] bucket, KEYS[2] slots
-- ARGV[1] now, ARGV[2] holder, ARGV[3] slots held under holder, ARGV[4] unused tokens,
-- ARGV[5] rate ('' none), ARGV[6] periodMs, ARGV[7] burst, then pairs: id, until
-- Returns: 1
local now, holder, held, unused = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local rate, period, burst = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
if rate and unused > 0 then
  local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
  if b[1] then
    local tokens, at = tonumber(b[1]), tonumber(b[2])
    tokens = math.min(burst, math.min(burst, tokens + math.max(0, now - at) * rate / period) + unused)
    at = math.max(now, at)
    redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'at', string.format('%d', at))
    redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * period / rate) + 1000)
  end
end
if held > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  local removed = 0
  for i = 1, held do removed = removed + redis.call('ZREM', KEYS[2], holder .. '#' .. i) end
  if removed > 0 then
    for i = 8, #ARGV, 2 do redis.call('ZADD', KEYS[2], tonumber(ARGV[i + 1]), ARGV[i]) end
    local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
    if last[2] then redis.call('PEXPIREAT', KEYS[2], tonumber(last[2]) + 60000) end
  end
end
return 1
