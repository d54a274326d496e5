-- control-columns: what a change decides by (shared/task-rows.ts CONTROL_COLUMNS). A NULL
-- policy column, attempts or updated_at is the usual value (migration 0009; STORED_DEFAULTS
-- in rows.ts, which a test keeps in step with these literals).
seq, topic, state, run_at, coalesce(attempts, 0) AS attempts, coalesce(max_attempts, 5) AS max_attempts, coalesce(ttr_ms, 30000) AS ttr_ms,
coalesce(backoff_base_ms, 1000) AS backoff_base_ms, coalesce(backoff_factor, 2) AS backoff_factor, coalesce(backoff_max_ms, 3600000) AS backoff_max_ms,
coalesce(backoff_jitter, 0.2) AS backoff_jitter, receipt, reserved_until, url
