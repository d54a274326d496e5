/**
 * Opens the database file the way the store needs it, or refuses with a DelayQError that
 * says why, having written nothing to the database:
 *
 * 1. The directory must exist and the file be creatable (STORE_UNAVAILABLE).
 * 2. The file must be empty or a delayq database (STORE_INCOMPATIBLE; see schema.ts),
 *    judged from its header bytes and then by a read-only look inside.
 * 3. One process at a time (STORE_LOCKED; see lock.ts), decided before the first write.
 * 4. WAL mode, `synchronous`, then the missing migrations in one transaction.
 *
 * `synchronous`: in WAL mode NORMAL syncs the WAL only at checkpoints, so a commit is in
 * the OS once COMMIT returns (a crash of our process loses nothing) but a power cut or
 * kernel crash can lose the last commits before the next checkpoint; FULL syncs the WAL at
 * every commit, so nothing acknowledged is lost even then (each group commit pays one fsync).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { DelayQError } from '../../core/errors.js';
import type { Clock, Logger } from '../../core/ports/index.js';
import { Checkpointer } from './checkpointer.js';
import { FileLock } from './lock.js';
import { identify, judgeHeader, migrate } from './schema.js';

export interface ConnectionOptions {
  readonly synchronous: 'NORMAL' | 'FULL';
  /** SQLite page cache, in KiB. */
  readonly cacheKiB: number;
  /** Checkpoint failures go here (see StoreOptions.logger). */
  readonly logger: Logger;
  /** Times the checkpoint passes (see checkpointer.ts). */
  readonly clock: Clock;
}

export interface Connection {
  readonly db: Database.Database;
  /** False while writes should wait for the checkpoint worker (see checkpointer.ts). */
  mayWrite(): boolean;
  /** Called after every COMMIT: the checkpointer copies it within its interval. */
  committed(): void;
  /** Closes the database, then the checkpoint worker, then drops the lock. */
  close(): Promise<void>;
}

export function openConnection(path: string, options: ConnectionOptions): Connection {
  const file = resolve(path);
  checkDirectory(file);
  judgeHeader(file, readHeader(file));
  let db: Database.Database;
  try {
    db = new Database(file, { timeout: 5_000 });
  } catch (error) {
    throw translate(error, file, 'open');
  }
  let lock: FileLock | null = null;
  try {
    // A read transaction: refuses a foreign file before we create anything next to it.
    db.transaction(() => identify(db, file)).deferred();
    lock = FileLock.acquire(file);
    if (db.pragma('journal_mode = WAL', { simple: true }) !== 'wal')
      throw new DelayQError('STORE_INCOMPATIBLE', `sqlite store ${file}: the file system does not support WAL mode`, { path: file });
    db.pragma(`synchronous = ${options.synchronous}`);
    db.pragma(`cache_size = -${options.cacheKiB}`);
    // Statement journals in memory: a multi-row INSERT keeps one to undo itself alone if a
    // row fails, and on disk that is a temp file written page by page (see inserts.ts).
    db.pragma('temp_store = MEMORY');
    // Read again under the lock: another process may have created the schema meanwhile.
    const identity = db.transaction(() => identify(db, file)).immediate();
    migrate(db, identity.kind === 'fresh' ? 0 : identity.version);
  } catch (error) {
    db.close();
    lock?.release();
    throw translate(error, file, 'open');
  }
  const checkpointer = new Checkpointer(db, file, options.synchronous, options.logger, options.clock);
  checkpointer.start();
  const held = lock;
  return {
    db,
    mayWrite: () => checkpointer.mayWrite(),
    committed: () => checkpointer.committed(),
    close: async () => {
      if (db.open) db.close();
      await checkpointer.stop();
      held.release();
    },
  };
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
