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

-- A source of one index's entries after the cursor, read `limit` at a time as the merge
-- needs them: entries whose body is missing (an index left pointing at nothing) are skipped
-- without counting, so they cannot end a page early. A page that comes back short tells the
-- caller it has read everything (remote-timers.ts, the engine's loads): a short page with
-- timers still after it would leave them unloaded.
local function source(key)
  return { key = key, rank = startRank(key), buf = {}, at = 1, done = false }
end

local function peek(src)
  if src.at > #src.buf then
    if src.done then return nil end
    local raw = redis.call('ZRANGE', src.key, src.rank, src.rank + limit - 1, 'WITHSCORES')
    src.rank = src.rank + limit
    src.buf, src.at = {}, 1
    for i = 1, #raw, 2 do
      local score = tonumber(raw[i + 1])
      if untilScore ~= '+inf' and score >= tonumber(ARGV[1]) then
        src.done = true
        break
      end
      table.insert(src.buf, { m = raw[i], score = score })
    end
    if #raw < 2 * limit then src.done = true end
    if #src.buf == 0 then return nil end
  end
  return src.buf[src.at]
end

local none = { buf = {}, at = 1, done = true }
local runs, ttrs = none, none
if ARGV[5] ~= 'ttr' then runs = source(KEYS[2]) end
if ARGV[5] ~= 'run' then ttrs = source(KEYS[3]) end
local out = {}
local n, skipped = 0, 0
-- Skipped entries are bounded too (4x the limit, as reserve-ready.lua bounds its pops): a
-- shard full of them cannot make one call long; the page then ends short, as before.
while n < limit and skipped < limit * 4 do
  local a, b = peek(runs), peek(ttrs)
  local pick, kind, src
  if a and (not b or a.score < b.score or (a.score == b.score and seqOf(a.m) < seqOf(b.m))) then
    pick, kind, src = a, 'run', runs
  elseif b then
    pick, kind, src = b, 'ttr', ttrs
  else
    break
  end
  src.at = src.at + 1
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
    n = n + 1
  else
    skipped = skipped + 1
  end
end
return out
