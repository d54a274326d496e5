-- flow-release: the deliveries $2 of topic $1 no longer in flight.
DELETE FROM S.flow_slots WHERE topic = $1 AND holder = ANY($2::text[])
