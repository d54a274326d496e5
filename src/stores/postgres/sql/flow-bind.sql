-- flow-bind: holder $5's admission of topic $1 (rate $2 per $3 ms, burst $4) bound to the
-- deliveries $7 held until $8, $6 unused (migration 0007's flow_bind), now $9.
SELECT S.flow_bind($1, $2, $3, $4, $5, $6, $7, $8, $9)
