/**
 * Copies the WAL back into the database file on a worker thread, so the event loop never
 * waits for it. SQLite's automatic checkpoint runs inside whichever COMMIT crosses the
 * threshold: with a large WAL that is writing and an fsync, all of it on the thread that
 * also fires timers, which showed as stalls and lateness (ADR 0017).
 * Here the main connection never checkpoints; a second connection on a worker thread
 * runs PASSIVE checkpoints (which never block the writer): one at start, one INTERVAL_MS
 * after a commit that follows a pass (the store's clock times it: an idle store holds no
 * timer), and back to back while the WAL holds frames it has not copied yet (the worker's
 * own loop, on its own thread, which no Clock reaches). The WAL can only start over once a
 * checkpoint has caught up completely, so under a steady stream of commits a checkpoint
 * on a timer alone would let it grow without bound.
 *
 * The WAL starts over only when a write begins after a checkpoint that copied every
 * frame. Under a steady stream of commits that moment never comes (each pass copies what
 * was there when it started, and commits land meanwhile), so once the WAL is past
 * MAX_WAL_FRAMES `mayWrite()` turns false: the group-commit writer holds its next
 * transaction while the worker runs passes back to back, until two passes in a row see
 * the same, fully copied WAL. The next write then starts the WAL over. That is
 * backpressure on producers (a pause every ~256 MiB of WAL), not a stall of the loop.
 *
 * If the worker cannot start or dies, the main connection falls back to SQLite's own
 * automatic checkpoints: slower tails, never an ever-growing WAL.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import type { Clock, Logger, TimerToken } from '../../core/ports/index.js';

/** From a commit to the pass that copies it, at most (the main thread never waits for it; ADR 0017). */
export const INTERVAL_MS = 200;
/**
 * ~256 MiB of 4 KiB pages: past it, producers wait for a checkpoint that catches up (ADR 0017).
 * The WAL file keeps its high-water size until close: no journal_size_limit, since
 * truncating a large WAL inside a COMMIT stalls the loop (ADR 0017).
 */
const MAX_WAL_FRAMES = 65_536;
/** A hold ends after this many passes without settling (with writes held, one or two do). */
const MAX_UNSETTLED_PASSES = 10;
/** Pages of WAL after which the main connection checkpoints itself if the worker is gone (ADR 0017). */
export const FALLBACK_AUTOCHECKPOINT = 10_000;

// Plain JavaScript evaluated in the worker, so it loads the same from src (tsx) and dist.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 5000 });
db.pragma('synchronous = ' + workerData.synchronous);
let timer = null;
function pass() {
  let behind = false;
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    behind = result.log > result.checkpointed;
    parentPort.postMessage({ log: result.log, checkpointed: result.checkpointed });
  } catch (error) {
    parentPort.postMessage({ error: String(error) });
  }
  // Behind: go again at once, so we catch up between two commits and the WAL restarts.
  // Caught up: wait for the main thread to ask (a commit, then its interval).
  timer = behind ? setTimeout(pass, 0) : null;
}
pass();
parentPort.on('message', (message) => {
  if (timer !== null) clearTimeout(timer);
  timer = null;
  if (message === 'pass') return pass();
  db.close();
  parentPort.close();
});
`;

interface Progress {
  readonly log?: number;
  readonly checkpointed?: number;
  readonly error?: string;
}

export class Checkpointer {
  private worker: Worker | null = null;
  private exited: Promise<void> = Promise.resolve();
  private holding = false;
  private lastLog = -1;
  private threshold = MAX_WAL_FRAMES;
  private unsettled = 0;
  /** The last checkpoint error reported: a failure that repeats every pass is logged once. */
  private lastError: string | null = null;
  /** The pass asked for INTERVAL_MS after the first commit since the last one. */
  private passTimer: TimerToken | null = null;

  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
    private readonly synchronous: 'NORMAL' | 'FULL',
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  start(): void {
    this.db.pragma('wal_autocheckpoint = 0');
    try {
      const driver = createRequire(import.meta.url).resolve('better-sqlite3');
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { driver, path: this.file, synchronous: this.synchronous },
      });
      worker.unref();
      // Its 'error' counts as the end too: an unref'd worker that failed keeps nothing alive
      // while its 'exit' is still to come, and stop() awaiting that exit let the event loop
      // drain with close() unresolved.
      this.exited = new Promise((resolve) => {
        worker.once('exit', () => resolve());
        worker.once('error', () => resolve());
      });
      worker.on('message', (progress: Progress) => this.onProgress(progress));
      worker.once('error', (error) => {
        this.logger.warn({ err: error, path: this.file }, 'sqlite checkpoint worker failed; SQLite checkpoints on its own from now on');
        this.fallBack();
      });
      worker.once('exit', () => (this.worker = null));
      this.worker = worker;
    } catch (error) {
      this.logger.warn({ err: error, path: this.file }, 'sqlite checkpoint worker did not start; SQLite checkpoints on its own');
      this.fallBack();
    }
  }

  /** False while the WAL is too long and the worker has not caught up: hold writes. */
  mayWrite(): boolean {
    return !this.holding;
  }

  /** A transaction committed: its frames get copied by a pass within INTERVAL_MS. */
  committed(): void {
    if (this.passTimer !== null || this.worker === null) return;
    this.passTimer = this.clock.setTimer(() => {
      this.passTimer = null;
      this.worker?.postMessage('pass');
    }, INTERVAL_MS);
  }

  /** Stops the worker; its connection is the last to close, so it leaves a checkpointed file. */
  async stop(): Promise<void> {
    if (this.passTimer !== null) this.clock.clearTimer(this.passTimer);
    this.passTimer = null;
    // Held while stopping: an unref'd worker would let the process exit under our await.
    this.worker?.ref();
    this.worker?.postMessage('stop');
    await this.exited;
  }

  private onProgress({ log, checkpointed, error }: Progress): void {
    if (error !== undefined) {
      if (error !== this.lastError) this.logger.warn({ err: error, path: this.file }, 'sqlite checkpoint failed; retrying');
      this.lastError = error;
      return;
    }
    if (this.lastError !== null) this.logger.info({ path: this.file }, 'sqlite checkpoints work again');
    this.lastError = null;
    if (log === undefined || checkpointed === undefined) return;
    // Two passes in a row over the same, fully copied WAL: no commit since, restart is safe.
    const settled = log === checkpointed && log === this.lastLog;
    this.lastLog = log;
    if (this.holding) {
      if (settled) {
        this.holding = false;
        this.threshold = MAX_WAL_FRAMES;
      } else if (++this.unsettled >= MAX_UNSETTLED_PASSES) {
        // Something else (a reader left open in another process) pins the WAL: holding
        // writes would stall the queue for nothing. Let the WAL grow another step instead.
        this.holding = false;
        this.threshold = log + MAX_WAL_FRAMES;
      } else {
        this.worker?.postMessage('pass');
      }
    } else if (log >= this.threshold) {
      this.holding = true;
      this.unsettled = 0;
      this.worker?.postMessage('pass');
    } else if (log < MAX_WAL_FRAMES) {
      this.threshold = MAX_WAL_FRAMES;
    }
  }

  private fallBack(): void {
    if (this.passTimer !== null) this.clock.clearTimer(this.passTimer);
    this.passTimer = null;
    this.worker = null;
    this.holding = false;
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT}`);
  }
}
