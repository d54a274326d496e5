-- lease-release: gives the lease up at a clean shutdown, only if it is still ours.
-- KEYS[1] lease
-- ARGV[1] lease value
-- Returns: 1 released, 0 not ours
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
