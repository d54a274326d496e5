-- reservation: the SET of a reservation of the tasks row `t`: pending -> reserved at $2 (now)
-- for $4 (the ttr; NULL: the task's own), the attempt counted. A receipt is
-- `<attempts>.<nonce><seq>` with $3 the nonce, so no two reservations share one.
state = 'reserved', attempts = coalesce(t.attempts, 0) + 1, receipt = (coalesce(t.attempts, 0) + 1)::text || '.' || $3::text || t.seq::text,
reserved_until = $2::bigint + coalesce($4::bigint, coalesce(t.ttr_ms, 30000)), due_at = $2::bigint + coalesce($4::bigint, coalesce(t.ttr_ms, 30000)), updated_at = $2
