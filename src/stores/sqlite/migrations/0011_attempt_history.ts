/**
 * 0011: each task keeps its last attempts (core/task/history.ts) in `history`, a JSON array
 * of [attempt, startedAt, durationMs, outcome, error] arrays, oldest first, at most 10
 * (HISTORY_LIMIT). The ack, retry and bury statements append to it in the same UPDATE that
 * settles the attempt (statements.ts, HISTORY_APPEND).
 *
 * ADD COLUMN with no default: a change to the table's text only, constant time on a
 * database of any size. Rows written before it hold NULL and read as an empty history.
 *
 * Numbered 0011: 0010 belongs to another branch (paused topics), landing in between when merged.
 */
export const sql = `
ALTER TABLE tasks ADD COLUMN history TEXT;
`;
