-- quarantine: tasks the engine cannot read (core/task/undecodable.ts: a payload that is not
-- JSON, an id or a topic that is not a name) go to dead with the error given; the rest of
-- each body is left for a person to mend. A pending task only when no receipt is given (a
-- read by get or list), a reserved one only under the receipt given (core's mayQuarantine).
-- A body whose header cannot be read at all (written by another client) is replaced, when no
-- receipt is given, by a dead body that keeps it whole as its payload: its indexes and
-- counters cannot be known, and no script ever reserves it.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts), KEYS[7] parkedh
-- ARGV[1] now, then per task: id, receipt ('' = none), error text
-- Returns: how many were moved
-- @include codec
local now = tonumber(ARGV[1])
local now36 = b36(now)
-- A parked task leaves the parked counts (unindex).
parkedCountsKey = KEYS[7]
local moved = 0
for i = 2, #ARGV, 3 do
  local id, receipt, err = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local body = redis.call('HGET', KEYS[1], id)
  if body and string.match(body, HEADER) then
    local t = decode(body)
    local mine = (receipt == '' and t.s == 'p') or (receipt ~= '' and t.s == 'r' and t.receipt == receipt)
    if mine and t.seq and t.runAt then
      leave(t, id)
      setReservation(t, nil, nil)
      setError(t, err)
      save(t, id, 'd', now, now36)
      moved = moved + 1
    end
  elseif body and receipt == '' then
    redis.call('HSET', KEYS[1], id, 'd,0,0,1,1,,' .. now36 .. ',' .. now36 .. ',,0,,,' .. b36(#err) .. '|' .. err .. body)
    redis.call('ZADD', KEYS[4], now, id)
    moved = moved + 1
  end
end
flushCounts()
flushParked(KEYS[7])
return moved
