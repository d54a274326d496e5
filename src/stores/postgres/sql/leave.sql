-- leave: process $1's heartbeat gone (a clean stop).
DELETE FROM S.members WHERE owner = $1
