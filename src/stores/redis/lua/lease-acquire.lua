-- lease-acquire: takes a free shard lease (SET NX PX) with a new fencing token.
-- KEYS[1] lease, KEYS[2] fence counter
-- ARGV[1] owner id, ARGV[2] ttl ms
-- Returns: the lease value "owner:fence", or '' when another owner holds it.
-- Checked first so a busy lease does not burn fencing numbers.
if redis.call('EXISTS', KEYS[1]) == 1 then return '' end
local value = ARGV[1] .. ':' .. redis.call('INCR', KEYS[2])
if redis.call('SET', KEYS[1], value, 'NX', 'PX', tonumber(ARGV[2])) then return value end
return ''
