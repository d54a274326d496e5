-- flow-bind: ends an admission (flow-admit.lua): the bucket is brought to now with the
-- admission's tokens still held, then they are no longer held and its unused tokens go back
-- (never past burst minus what other admissions hold); its slots under `holder`, if still
-- held, become one slot per delivery, each held until its reservation runs out.
-- KEYS[1] bucket, KEYS[2] slots
-- ARGV[1] now, ARGV[2] holder, ARGV[3] slots held under holder, ARGV[4] unused tokens,
-- ARGV[5] rate ('' none), ARGV[6] periodMs, ARGV[7] burst, then pairs: id, until
-- Returns: 1
-- @include flow-bucket
local now, holder, held, unused = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local rate, period, burst = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
if rate then
  local tokens, at, holders = readBucket()
  local heldTokens, left, gone, mine, lastUntil = 0, 0, {}, false, now
  for _, h in ipairs(holders) do
    heldTokens = heldTokens + h[2]
    if h[3] <= now then gone[#gone + 1] = h[1]
    elseif h[1] == 'h' .. holder then
      gone[#gone + 1] = h[1]
      mine = true
    else
      left = left + h[2]
      lastUntil = math.max(lastUntil, h[3])
    end
  end
  if tokens and at then
    tokens = math.min(math.max(0, burst - heldTokens), tokens + math.max(0, now - at) * rate / period)
    at = math.max(now, at)
    if mine and unused > 0 then tokens = math.min(math.max(0, burst - left), tokens + unused) end
    if #gone > 0 then redis.call('HDEL', KEYS[1], unpack(gone)) end
    redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'at', string.format('%d', at))
    redis.call('PEXPIRE', KEYS[1], math.max(math.ceil((burst - tokens) * period / rate), lastUntil - now) + 1000)
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
