-- purge-topic: one step of a topic purge on one shard: deletes, among the tasks one HSCAN
-- step of the pool returns, those of the topic in the given states, at most `limit`.
-- There is no index by topic (no write pays for one), so a pass reads the whole pool, a
-- bounded step per call. A deleted pending task leaves `delayed` (or the parked counts:
-- parkedGone) and its counter; a dead one leaves `dead`; a completed or cancelled one
-- stays named in `done`, which purge.lua skips once the body is gone, and so does a
-- ready-list entry of a pending one (reserve-ready.lua reserves only what is pending).
-- KEYS: standard (pool, delayed, reserved, dead, done, counts), KEYS[7] parkedh
-- ARGV[1] HSCAN cursor ('0' starts a pass), ARGV[2] COUNT and limit (the caller keeps it
-- <= 1,000), ARGV[3] topic, ARGV[4] the state chars to purge: 'p', 'd' or 'cx'
-- Returns: { next, id, seq, runAt, lane, ... }: the cursor of the next step ('0': the pass
-- is over), then per task deleted its id, seq, runAt and lane (its run timer's identity,
-- for the engine to forget). A step that reached the limit before the end of its entries answers its own
-- cursor again, marked '=' ('=0' from the start: a bare '0' would end the pass with the
-- entries it left undeleted): the next step reads those entries again, the deleted ones are
-- gone. ARGV[1] may carry that mark.
-- @include codec
parkedCountsKey = KEYS[7]
local cursor, limit, topic, states = (string.gsub(ARGV[1], '^=', '')), tonumber(ARGV[2]), ARGV[3], ARGV[4]
local scan = redis.call('HSCAN', KEYS[1], cursor, 'COUNT', limit)
local entries = scan[2]
local out = { scan[1] }
for i = 1, #entries, 2 do
  local body = entries[i + 1]
  if string.find(states, string.sub(body, 1, 1), 1, true) then
    local t = decode(body)
    if t.topic == topic then
      if #out > 4 * limit then
        out[1] = '=' .. cursor
        break
      end
      local id = entries[i]
      leave(t, id)
      redis.call('HDEL', KEYS[1], id)
      out[#out + 1] = id
      out[#out + 1] = t.seq
      out[#out + 1] = t.runAt
      out[#out + 1] = laneOf(t)
    end
  end
end
flushCounts()
flushParked(KEYS[7])
return out
