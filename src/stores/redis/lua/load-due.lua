-- load-due: one shard's timers with dueAt < until, strictly after the cursor (dueAt, seq),
-- ordered by (dueAt, seq): pending tasks (delayed, score runAt) merged with reservations
-- (reserved, score reservedUntil). Read-only.
-- KEYS[1] pool, KEYS[2] delayed, KEYS[3] reserved
-- ARGV[1] until ('+inf' or ms), ARGV[2] cursor dueAt ('' = from the start), ARGV[3] cursor seq,
-- ARGV[4] limit (the caller keeps it <= 2,000), ARGV[5] 'ttr' for reservations only, 'run' for
-- pending tasks only (else both)
-- Returns: flat { id, kind ('run'|'ttr'), dueAt, seq, topic, receipt ('' for run) } per timer.
-- @include codec
local limit = tonumber(ARGV[4])
local untilScore = '(' .. ARGV[1]
if ARGV[1] == '+inf' then untilScore = '+inf' end

-- The rank of the first entry after the cursor: entries with a smaller score, plus those
-- with an equal score whose member (seq bytes first) is below the bound, found by bisection.
local function startRank(key)
  if ARGV[2] == '' then return 0 end
  local dueAt = ARGV[2]
  local afterSeq = tonumber(ARGV[3])
  local lo = redis.call('ZCOUNT', key, '-inf', '(' .. dueAt)
  local hi = lo + redis.call('ZCOUNT', key, dueAt, dueAt)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local m = redis.call('ZRANGE', key, mid, mid)[1]
    if seqOf(m) <= afterSeq then lo = mid + 1 else hi = mid end
  end
  return lo
end

local function page(key)
  local from = startRank(key)
  local raw = redis.call('ZRANGE', key, from, from + limit - 1, 'WITHSCORES')
  local out = {}
  for i = 1, #raw, 2 do
    local score = tonumber(raw[i + 1])
    if untilScore ~= '+inf' and score >= tonumber(ARGV[1]) then break end
    table.insert(out, { m = raw[i], score = score })
  end
  return out
end

local runs, ttrs = {}, {}
if ARGV[5] ~= 'ttr' then runs = page(KEYS[2]) end
if ARGV[5] ~= 'run' then ttrs = page(KEYS[3]) end
local out = {}
local i, j, n = 1, 1, 0
while n < limit do
  local a, b = runs[i], ttrs[j]
  local pick, kind
  if a and (not b or a.score < b.score or (a.score == b.score and seqOf(a.m) < seqOf(b.m))) then
    pick, kind, i = a, 'run', i + 1
  elseif b then
    pick, kind, j = b, 'ttr', j + 1
  else
    break
  end
  local id = string.sub(pick.m, 8)
  local body = redis.call('HGET', KEYS[1], id)
  if body then
    local t = decode(body)
    table.insert(out, id)
    table.insert(out, kind)
    table.insert(out, pick.score)
    table.insert(out, t.seq)
    table.insert(out, laneOf(t))
    table.insert(out, kind == 'ttr' and (t.receipt or '') or '')
  end
  n = n + 1
end
return out
