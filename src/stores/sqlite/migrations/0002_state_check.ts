/**
 * 0002: drops the column CHECK on tasks.state, `state IN ('pending', 'reserved',
 * 'completed', 'dead', 'cancelled')`.
 *
 * Why: SQLite checks an IN list of more than two constants by building an ephemeral
 * b-tree of it and looking the value up there, and it did so for every inserted row: ~2 us
 * a row, a quarter of a scheduleMany's insert work. The table CHECK of 0001 already
 * implies it (each of its three branches pins state to one of those five values), so no
 * row can hold another state with or without it.
 *
 * How: the column constraint is a change to the table's text only, not to any stored row,
 * so the CREATE TABLE text in sqlite_schema is edited in place (SQLite's documented
 * procedure for dropping a CHECK, https://sqlite.org/lang_altertable.html#otheralter)
 * instead of copying every row into a new table: constant time on a database of any
 * size. The schema cookie goes up so that every connection re-reads the schema.
 */
import type Database from 'better-sqlite3';

/** The constraint exactly as 0001 wrote it. */
export const STATE_CHECK = " CHECK (state IN ('pending', 'reserved', 'completed', 'dead', 'cancelled'))";

export function apply(db: Database.Database): void {
  const sql = db.prepare<[], string>("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'tasks'").pluck().get();
  if (sql === undefined || !sql.includes(STATE_CHECK)) return;
  const version = db.pragma('schema_version', { simple: true }) as number;
  // better-sqlite3 opens connections in defensive mode, which forbids editing sqlite_schema.
  db.unsafeMode(true);
  try {
    db.pragma('writable_schema = ON');
    db.prepare("UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = 'tasks'").run(sql.replace(STATE_CHECK, ''));
    db.pragma(`schema_version = ${version + 1}`);
    db.pragma('writable_schema = OFF');
  } finally {
    db.unsafeMode(false);
  }
}
