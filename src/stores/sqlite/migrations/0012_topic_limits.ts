/**
 * 0012: topic flow limits (issue 36, ADR 0043), one row per limited topic, the limits as
 * compact JSON (core/flow/limits.ts). The buckets and slots they govern are kept in memory:
 * one process owns the file, and a restart starting with full buckets is within the limits'
 * promise (at most `burst` at once).
 */
export const sql = `
CREATE TABLE topic_limits (
  topic  TEXT    PRIMARY KEY,
  limits TEXT    NOT NULL,
  set_at INTEGER NOT NULL
) WITHOUT ROWID;
`;
