-- reserved-leases: the reservations of topic $1 in force, ending in ($2, $3], by receipt: a range of the
-- due index (a reservation's due_at is its end), its rows read for the topic (topic-limits.ts).
SELECT receipt, reserved_until FROM S.tasks WHERE due_at > $2::bigint AND due_at <= $3::bigint AND state = 'reserved' AND topic = $1
