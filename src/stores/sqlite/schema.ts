/**
 * Decides whether a file is ours before anything is written to it, then brings its
 * schema up to date. A delayq database is recognised by PRAGMA application_id; its
 * schema version is PRAGMA user_version (the number of migrations applied).
 *
 *   fresh (no tables, application_id 0)  -> every migration, in one transaction
 *   ours, user_version < latest          -> the missing migrations, in one transaction
 *   ours, user_version > latest          -> STORE_INCOMPATIBLE (a newer delayq wrote it)
 *   anything else                        -> STORE_INCOMPATIBLE (not a delayq database)
 */
import type Database from 'better-sqlite3';
import { DelayQError } from '../../core/errors.js';
import { LATEST_VERSION, MIGRATIONS } from './migrations/index.js';

/** "dlyq": marks a SQLite file as a delayq database. */
export const APPLICATION_ID = 0x646c7971;

const SQLITE_MAGIC = 'SQLite format 3\u0000';

export type Identity = { readonly kind: 'fresh' } | { readonly kind: 'delayq'; readonly version: number };

/**
 * Judges a file from its first 100 bytes, without SQLite: a file that is not SQLite at all,
 * or a SQLite file stamped by another application, is refused before a connection could
 * recover a journal or checkpoint a WAL into it. Passes what only SQLite can tell (an empty
 * file, or an unstamped header whose newest copy may still be in the WAL) on to identify().
 */
export function judgeHeader(path: string, header: Buffer): void {
  if (header.length === 0) return;
  if (header.length < 100 || header.toString('latin1', 0, 16) !== SQLITE_MAGIC)
    throw notOurs(path, 'it is not a SQLite database');
  const applicationId = header.readUInt32BE(68);
  if (applicationId !== 0 && applicationId !== APPLICATION_ID)
    throw notOurs(path, `it belongs to another application (application_id 0x${applicationId.toString(16)})`);
}

/** Reads what the database says about itself; call inside a transaction that holds the lock. */
export function identify(db: Database.Database, path: string): Identity {
  const applicationId = db.pragma('application_id', { simple: true }) as number;
  const version = db.pragma('user_version', { simple: true }) as number;
  const objects = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM sqlite_schema').get()?.n ?? 0;
  if (applicationId === 0 && version === 0 && objects === 0) return { kind: 'fresh' };
  if (applicationId !== APPLICATION_ID) throw notOurs(path, 'it has tables but no delayq application_id');
  if (version > LATEST_VERSION)
    throw new DelayQError(
      'STORE_INCOMPATIBLE',
      `sqlite store ${path}: written by a newer delayq (schema version ${version}, this build knows up to ${LATEST_VERSION}); upgrade delayq to open it`,
      { path, version, supported: LATEST_VERSION },
    );
  return { kind: 'delayq', version };
}

/** Applies the migrations after `fromVersion` in one transaction: all of them or none. */
export function migrate(db: Database.Database, fromVersion: number): void {
  const missing = MIGRATIONS.filter((m) => m.version > fromVersion);
  if (missing.length === 0) return;
  db.transaction(() => {
    if (fromVersion === 0) db.pragma(`application_id = ${APPLICATION_ID}`);
    for (const migration of missing) {
      if (migration.sql !== undefined) db.exec(migration.sql);
      migration.apply?.(db);
      db.pragma(`user_version = ${migration.version}`);
    }
  }).immediate();
}

function notOurs(path: string, why: string): DelayQError {
  return new DelayQError('STORE_INCOMPATIBLE', `sqlite store ${path}: not a delayq database (${why}); refusing to touch it`, { path });
}
