-- lease-renew: extends the lease only while it still holds our value (compare and set).
-- KEYS[1] lease
-- ARGV[1] lease value, ARGV[2] ttl ms
-- Returns: 1 renewed, 0 lost
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
