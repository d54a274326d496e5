-- reserved-returning: what a reservation answers per task (task-writes.ts ReserveRow).
RETURNING t.id, t.topic, t.payload, t.run_at, t.attempts, coalesce(t.max_attempts, 5) AS max_attempts, t.receipt, t.reserved_until, t.url, t.trace
