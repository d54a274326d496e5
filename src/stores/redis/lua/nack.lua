-- nack: a failed attempt, only with the current receipt: -> dead when attempts >= maxAttempts,
-- else -> pending at now + (delayMs or the task's backoff, as src/core/task/backoff.ts).
-- KEYS: standard (pool, delayed, reserved, dead, done, counts)
-- ARGV[1] now, ARGV[2] id, ARGV[3] receipt, ARGV[4] delayMs ('' = backoff), ARGV[5] random in [0,1),
-- ARGV[6] '1' when an error text follows, ARGV[7] error text, ARGV[8] the default backoff
-- policy (for tasks stored with an empty one), ARGV[9] how the attempt ended (its history
-- entry's outcome: 'nacked', 'push:5xx'...), ARGV[10] the bytes of the error text the entry
-- keeps (the caller cuts it to HISTORY_ERROR_LIMIT characters)
-- Returns: { 'retrying', runAt, seq, lane, topic } | { 'dead', 0, 0, lane, topic } | { 'not_found' } | { 'stale' }
-- @include codec
local now, id, receipt = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local t = load(id)
if not t then return { 'not_found' } end
if t.s ~= 'r' or t.receipt ~= receipt then return { 'stale' } end
local delay = tonumber(ARGV[4])
if delay == nil then
  local b = {}
  local policy = t.f[6]
  if policy == '' then policy = ARGV[8] end
  for part in string.gmatch(policy, '[^:]+') do table.insert(b, part) end
  local base, factor, maxMs, jitter = tonumber(b[1], 36), tonumber(b[2]), tonumber(b[3], 36), tonumber(b[4])
  local raw = math.min(maxMs, base * math.pow(factor, math.max(0, t.attempts - 1)))
  delay = math.floor(raw * (1 - jitter) + raw * jitter * tonumber(ARGV[5]) + 0.5)
end
local err = nil
if ARGV[6] == '1' then err = ARGV[7] end
local histErr = nil
if err then histErr = string.sub(err, 1, tonumber(ARGV[10])) end
local result = settleFailure(t, id, now, b36(now), now + delay, err, ARGV[9], histErr)
flushCounts()
return result
