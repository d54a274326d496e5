/**
 * Opens the database file the way the store needs it, or refuses with a DelayQError that
 * says why, having written nothing:
 *
 * - The directory must exist and the file be creatable (STORE_UNAVAILABLE).
 * - The file must be empty or a delayq database (STORE_INCOMPATIBLE; see schema.ts).
 * - One process at a time (STORE_LOCKED). The connection runs in EXCLUSIVE locking mode
 *   and takes the write lock before it reads anything, then keeps it until close. The
 *   lock is a POSIX lock on the file, so the kernel drops it when the owner dies, even by
 *   SIGKILL: no stale lock file, no pid that may have been reused. The price: while a
 *   queue runs, no other process can read the file (stop it, or use the HTTP API).
 *
 * WAL mode, then `synchronous`: NORMAL syncs the WAL at checkpoints only, so a commit is
 * in the OS once COMMIT returns (a process crash loses nothing) but a power cut can lose
 * the last commits; FULL syncs the WAL at every commit.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { DelayQError } from '../../core/errors.js';
import { identify, judgeHeader, migrate } from './schema.js';

export interface ConnectionOptions {
  readonly synchronous: 'NORMAL' | 'FULL';
  /** SQLite page cache, in KiB. */
  readonly cacheKiB: number;
}

export function openConnection(path: string, options: ConnectionOptions): Database.Database {
  const file = resolve(path);
  checkDirectory(file);
  judgeHeader(file, readHeader(file));
  let db: Database.Database;
  try {
    // timeout 0: a held lock is an answer (STORE_LOCKED), not something to wait for.
    db = new Database(file, { timeout: 0 });
  } catch (error) {
    throw translate(error, file, 'open');
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    // Takes (and, in exclusive mode, keeps) the write lock before the first read.
    db.exec('BEGIN EXCLUSIVE');
    let identity;
    try {
      identity = identify(db, file);
    } finally {
      db.exec('ROLLBACK');
    }
    if (db.pragma('journal_mode = WAL', { simple: true }) !== 'wal')
      throw new DelayQError('STORE_INCOMPATIBLE', `sqlite store ${file}: the file system does not support WAL mode`, { path: file });
    db.pragma(`synchronous = ${options.synchronous}`);
    db.pragma(`cache_size = -${options.cacheKiB}`);
    db.pragma('foreign_keys = OFF');
    // Checkpoint every ~40 MB of WAL instead of ~4 MB: an index page rewritten by many
    // commits is copied into the database once per checkpoint (+25% batched inserts).
    db.pragma('wal_autocheckpoint = 10000');
    migrate(db, identity.kind === 'fresh' ? 0 : identity.version);
    return db;
  } catch (error) {
    db.close();
    throw translate(error, file, 'open');
  }
}

/** Maps SQLite's failures to the codes callers branch on; DelayQErrors pass through. */
export function translate(error: unknown, path: string, during: string): DelayQError {
  if (error instanceof DelayQError) return error;
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'UNKNOWN';
  const message = error instanceof Error ? error.message : String(error);
  const details = { path, sqliteCode: code };
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
    return new DelayQError('STORE_LOCKED', `sqlite store ${path}: held by another delayq process (or connection); only one may open it`, details, { cause: error });
  if (code.startsWith('SQLITE_NOTADB'))
    return new DelayQError('STORE_INCOMPATIBLE', `sqlite store ${path}: not a delayq database (${message})`, details, { cause: error });
  if (code === 'SQLITE_CANTOPEN')
    return new DelayQError('STORE_UNAVAILABLE', `sqlite store ${path}: cannot open or create the file; is its directory writable, on a regular file system?`, details, { cause: error });
  return new DelayQError('STORE_UNAVAILABLE', `sqlite store ${path}: ${during} failed: ${message} (${code})`, details, { cause: error });
}

function checkDirectory(file: string): void {
  const dir = dirname(file);
  let isDirectory: boolean;
  try {
    isDirectory = statSync(dir).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'UNKNOWN';
    const why = code === 'ENOENT' ? 'does not exist' : code === 'ENOTDIR' ? 'is inside a file, not a directory' : `cannot be read (${code})`;
    throw new DelayQError('STORE_UNAVAILABLE', `sqlite store ${file}: the directory ${dir} ${why}; create it first`, { path: file, errno: code }, { cause: error });
  }
  if (!isDirectory) throw new DelayQError('STORE_UNAVAILABLE', `sqlite store ${file}: ${dir} is not a directory`, { path: file });
}

function readHeader(file: string): Buffer {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return Buffer.alloc(0);
    throw new DelayQError('STORE_UNAVAILABLE', `sqlite store ${file}: cannot read the file (${code ?? 'unknown error'})`, { path: file, errno: code }, { cause: error });
  }
  try {
    const header = Buffer.alloc(100);
    return header.subarray(0, readSync(fd, header, 0, 100, 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new DelayQError('STORE_UNAVAILABLE', `sqlite store ${file}: cannot read the file (${code ?? 'unknown error'})`, { path: file, errno: code }, { cause: error });
  } finally {
    closeSync(fd);
  }
}
