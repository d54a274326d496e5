/**
 * 0014: a task's priority (ADR 0057): among due tasks of a topic, higher first. 0 for every
 * existing row and for a task scheduled without one; written after the insert only for the
 * tasks that have one (like 0013's trace), so the batch insert forms stay as they are. The
 * order of due tasks is the engine's ready queue's (local dispatch): no index is needed.
 */
export const sql = `
ALTER TABLE tasks ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
`;
