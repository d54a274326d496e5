-- 0013: the scheduling call's W3C trace context (core/trace-context.ts: `traceparent`, then a
-- space and `tracestate`), NULL for a task scheduled without one. Like url: a nullable
-- column with no default, so adding it rewrites no row, and a task without one stores nothing.
-- The SQL API's schedule() leaves it NULL.

ALTER TABLE S.tasks ADD COLUMN trace text;
