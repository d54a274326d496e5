-- take: pops up to `max` ids from a topic's ready list and claims each that is still
-- pending and due (as claim.lua). Stale ids (cancelled, taken, rescheduled later) are
-- dropped. An id due within 1 s of `now` was promoted by a process whose clock runs a
-- little ahead: it goes back to the head of the list and the caller retries at its runAt.
-- KEYS: standard (pool, delayed, reserved, dead, done, counts), KEYS[7] the topic's ready list
-- ARGV[1] now, ARGV[2] ttr override ('' = the task's ttrMs), ARGV[3] receipt nonce, ARGV[4] max (<= 1,000)
-- Returns: { ids left in the list, runAt of an id put back (0 = none), then id, body per claimed task }
-- @include reserve
local now = tonumber(ARGV[1])
local now36 = base36(now)
local ttr = tonumber(ARGV[2])
local max = tonumber(ARGV[4])
local out = { 0, 0 }
local claimed, popped = 0, 0
-- Pops at most 4 x max ids, so a list full of stale ids cannot make one call long.
while claimed < max and popped < max * 4 do
  local ids = redis.call('LPOP', KEYS[7], math.min(max - claimed, max * 4 - popped))
  if not ids then break end
  local bodies = redis.call('HMGET', KEYS[1], unpack(ids))
  local early = false
  for j = 1, #ids do
    local id = ids[j]
    popped = popped + 1
    local body = bodies[j]
    if body then
      local status, value = reserveBody(id, body, now, now36, ttr, ARGV[3] .. base36(popped))
      if status == 'reserved' then
        claimed = claimed + 1
        out[#out + 1] = id
        out[#out + 1] = value
      elseif status == 'early' and value <= now + 1000 then
        -- Back to the head of the list in their order: this id and the ones popped after it.
        local back = {}
        for k = #ids, j, -1 do back[#back + 1] = ids[k] end
        redis.call('LPUSH', KEYS[7], unpack(back))
        out[2] = value
        early = true
        break
      end
    end
  end
  if early then break end
end
flushReserved()
out[1] = redis.call('LLEN', KEYS[7])
return out
