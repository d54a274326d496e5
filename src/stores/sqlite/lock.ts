/**
 * One delayq process per database file. The lock is a tiny SQLite file next to the
 * database (`<file>.lock`) held by a connection in EXCLUSIVE locking mode: SQLite takes a
 * POSIX lock on it and keeps it until close, and the kernel drops it when the holder
 * dies, even by SIGKILL. So there is no stale lock to clean up and no pid to check for
 * liveness (pids are reused); a live holder is the only thing that can refuse us.
 *
 * The lock file is never deleted: unlinking a lock file while another process waits on
 * it would let two processes each lock a different inode under the same name.
 *
 * Every lock taken stays in HELD until release(). better-sqlite3 closes a connection its
 * garbage collector reclaims, and closing it drops the POSIX lock: a store the process no
 * longer references (a holder that only waits to be killed, or a store dropped without
 * close()) would otherwise give its lock away at the next GC while the process lives on.
 */
import Database from 'better-sqlite3';
import { DelayQError } from '../../core/errors.js';

const HELD = new Set<Database.Database>();

export class FileLock {
  private constructor(private readonly handle: Database.Database) {}

  /** Takes the lock of `file` at once or throws STORE_LOCKED; never waits. */
  static acquire(file: string): FileLock {
    const lockPath = `${file}.lock`;
    let handle: Database.Database;
    try {
      handle = new Database(lockPath, { timeout: 0 });
    } catch (error) {
      throw new DelayQError('STORE_UNAVAILABLE', `sqlite store ${file}: cannot create its lock file ${lockPath}: ${String(error)}`, { path: file }, { cause: error });
    }
    try {
      handle.pragma('locking_mode = EXCLUSIVE');
      // A write transaction takes the exclusive lock; exclusive mode keeps it after COMMIT.
      handle.exec('BEGIN EXCLUSIVE; COMMIT');
      HELD.add(handle);
      return new FileLock(handle);
    } catch (error) {
      handle.close();
      const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
      if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
        throw new DelayQError('STORE_LOCKED', `sqlite store ${file}: held by another delayq process (or store) that is still running; only one may open it`, { path: file, lockPath }, { cause: error });
      throw new DelayQError('STORE_UNAVAILABLE', `sqlite store ${file}: cannot lock ${lockPath}: ${String(error)}`, { path: file, lockPath }, { cause: error });
    }
  }

  release(): void {
    HELD.delete(this.handle);
    if (this.handle.open) this.handle.close();
  }
}
