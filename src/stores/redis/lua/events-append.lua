-- events-append: one stream entry for a batch of lifecycle events (event-log.ts), then the
-- oldest entries trimmed while the events kept without them still number at least `retain`.
-- KEYS[1] the stream, KEYS[2] the count of events it holds (same hash tag).
-- ARGV[1] events in the batch, ARGV[2] their JSON array, ARGV[3] retain.
-- Returns: the new entry's id.
-- An entry written around delayq whose `n` is not a count counts as one event.
local added = tonumber(ARGV[1])
local retain = tonumber(ARGV[3])
local id = redis.call('XADD', KEYS[1], '*', 'n', ARGV[1], 'e', ARGV[2])
local total = redis.call('INCRBY', KEYS[2], added)
-- At most a few entries a call: a batch adds one, so the head rarely needs more than one step.
for _ = 1, 16 do
  local first = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1]
  if first == nil or first[1] == id then break end
  local fields = first[2]
  local n = 1
  if fields[1] == 'n' then n = math.max(1, tonumber(fields[2]) or 1) end
  if total - n < retain then break end
  redis.call('XDEL', KEYS[1], first[1])
  total = redis.call('INCRBY', KEYS[2], -n)
end
return id
