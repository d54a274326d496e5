/**
 * 0013: the scheduling call's W3C trace context (core/trace-context.ts: `traceparent`, then a
 * space and `tracestate`). A nullable column like 0006's url: NULL for every task scheduled
 * without one, no rewrite of existing rows, written after the insert only for the tasks
 * that have one, so the batch insert forms stay as they are.
 */
export const sql = `
ALTER TABLE tasks ADD COLUMN trace TEXT;
`;
