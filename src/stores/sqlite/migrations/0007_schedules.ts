/**
 * 0007: recurring schedules, one row per schedule id (src/core/schedule). The schedule is
 * one JSON text (schedule-codec.ts), as push subscriptions are (0005): read whole by every
 * process, written by swapSchedule with a compare on the whole text. IF NOT EXISTS: 0006
 * is another branch's, and this file must stay correct whichever of the two lands first
 * (see migrations/index.ts).
 */
export const sql = `
CREATE TABLE IF NOT EXISTS schedules (
  id         TEXT    PRIMARY KEY,
  schedule   TEXT    NOT NULL CHECK (json_valid(schedule)),
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
`;
