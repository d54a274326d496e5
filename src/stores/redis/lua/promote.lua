-- promote: moves due pending tasks into the shared ready list of their topic, so that
-- consumers in any process can take them, and wakes them by PUBLISH. Only the shard's
-- lease holder may promote (the lease value is the fencing token). A promoted task stays
-- pending and stays in `delayed` (loadDue still reports it; a new owner re-promotes it):
-- take.lua claims it at most once, whatever the number of list entries.
-- KEYS[1] pool, KEYS[2] lease, KEYS[3..] ready lists (one per topic in this call)
-- ARGV[1] lease value, ARGV[2] now, ARGV[3] the message ("<shard> <owner>"), ARGV[4] T = #KEYS - 2,
-- ARGV[5..4+T] the ready channel of each ready list, in KEYS order; then pairs: id, index of its list in KEYS
-- Returns: { 1, pushed per ready list... } or { 0 } when the lease is not ours.
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return { 0 } end
local now = tonumber(ARGV[2])
local topics = tonumber(ARGV[4])
local pushed = {}
for k = 3, #KEYS do pushed[k] = 0 end
for i = 5 + topics, #ARGV, 2 do
  local id, k = ARGV[i], tonumber(ARGV[i + 1])
  local body = redis.call('HGET', KEYS[1], id)
  if body then
    -- Only the state and runAt matter here: match them, not the whole body.
    local s, runAt = string.match(body, '^(%a),[^,]*,([^,]*)')
    if s == 'p' and tonumber(runAt, 36) <= now then
      redis.call('RPUSH', KEYS[k], id)
      pushed[k] = pushed[k] + 1
    end
  end
end
local out = { 1 }
for k = 3, #KEYS do
  if pushed[k] > 0 then redis.call('PUBLISH', ARGV[2 + k], ARGV[3]) end
  table.insert(out, pushed[k])
end
return out
