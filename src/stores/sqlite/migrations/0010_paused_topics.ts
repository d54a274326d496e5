/**
 * 0010: paused topics (ADR 0040), one row per paused topic; resuming deletes the row.
 * paused_at is for operators looking at the file with the sqlite3 shell. WITHOUT ROWID: the
 * topic is the key.
 */
export const sql = `
CREATE TABLE paused_topics (
  topic     TEXT    PRIMARY KEY,
  paused_at INTEGER NOT NULL
) WITHOUT ROWID;
`;
