-- flow-admit: takes up to `want` deliveries of a limited topic (core/flow/token-bucket.ts and
-- flow-ledger.ts are the rules, kept the same here): whole tokens from its bucket, and slots
-- under `holder` until `holdUntil` while fewer than `concurrency` are held. The tokens an
-- admission takes stay held, as the bucket's field 'h<holder>' = "<tokens>,<until>", until it
-- is bound (flow-bind.lua) or runs out: the bucket refills only up to burst minus the tokens
-- held (ADR 0052), and a holder that ran out leaves after the refill.
-- KEYS[1] bucket (HASH tokens, at, h<holder>...), KEYS[2] slots (ZSET member -> held until)
-- ARGV[1] now, ARGV[2] want, ARGV[3] holder, ARGV[4] holdUntil,
-- ARGV[5] rate ('' none), ARGV[6] periodMs, ARGV[7] burst, ARGV[8] concurrency ('' none)
-- Returns: { granted, retryAt } (retryAt: when a token comes, if none was granted for want of one; else 0)
-- @include flow-bucket
local now, want, holder, holdUntil = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local rate, period, burst, concurrency = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local granted = want
local tokens, at
local lastUntil = holdUntil
if rate then
  local holders
  tokens, at, holders = readBucket()
  local held, runOut = 0, {}
  for _, h in ipairs(holders) do
    held = held + h[2]
    if h[3] <= now then runOut[#runOut + 1] = h[1] else lastUntil = math.max(lastUntil, h[3]) end
  end
  local cap = math.max(0, burst - held)
  if tokens and at then
    tokens = math.min(cap, tokens + math.max(0, now - at) * rate / period)
    at = math.max(now, at)
  else
    tokens, at = cap, now
  end
  if #runOut > 0 then redis.call('HDEL', KEYS[1], unpack(runOut)) end
  granted = math.max(0, math.min(granted, math.floor(tokens)))
end
if concurrency then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  local held = redis.call('ZCARD', KEYS[2])
  granted = math.max(0, math.min(granted, concurrency - held))
  for i = 1, granted do redis.call('ZADD', KEYS[2], holdUntil, holder .. '#' .. i) end
  if granted > 0 then
    local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
    redis.call('PEXPIREAT', KEYS[2], math.max(tonumber(last[2]), holdUntil) + 60000)
  end
end
if rate then
  redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens - granted), 'at', string.format('%d', at))
  if granted > 0 then redis.call('HSET', KEYS[1], 'h' .. holder, granted .. ',' .. string.format('%d', holdUntil)) end
  -- Once full again, and held by no admission, the bucket is as good as new: the key goes, and a missing bucket is full.
  redis.call('PEXPIRE', KEYS[1], math.max(math.ceil((burst - (tokens - granted)) * period / rate), lastUntil - now) + 1000)
end
local retryAt = 0
if granted == 0 and rate and tokens < 1 then retryAt = at + math.ceil((1 - tokens) * period / rate) end
return { granted, retryAt }
