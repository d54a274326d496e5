/**
 * Copies the WAL back into the database file on a worker thread, so the event loop never
 * waits for it. SQLite's automatic checkpoint runs inside whichever COMMIT crosses the
 * threshold: with a large WAL that is tens of ms of writing and an fsync, all of it on
 * the thread that also fires timers (we measured 70 ms stalls and p99 lateness of 47 ms).
 * Here the main connection never checkpoints; a second connection on a worker thread
 * runs PASSIVE checkpoints (which never block the writer): every 200 ms, and back to back
 * while the WAL holds frames it has not copied yet. The WAL can only start over once a
 * checkpoint has caught up completely, so under a steady stream of commits a checkpoint
 * on a timer alone would let it grow without bound.
 *
 * The WAL starts over only when a write begins right after a checkpoint that copied
 * every frame. Under a steady stream of commits that moment may never come, so once the
 * WAL is past MAX_WAL_FRAMES and the checkpoint is behind, `mayWrite()` turns false and
 * the group-commit writer holds its next transaction (a few ms) until the worker has
 * caught up: backpressure on producers instead of an unbounded file or a stalled loop.
 *
 * If the worker cannot start or dies, the main connection falls back to SQLite's own
 * automatic checkpoints: slower tails, never an ever-growing WAL.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

const INTERVAL_MS = 200;
/**
 * ~1 GiB of 4 KiB pages: a safety valve for sustained floods, far above what a checkpoint
 * pass leaves behind in normal operation. It can overshoot by one pass's worth of writes
 * (the worker reports after each pass). The WAL file keeps its high-water size until close
 * (no journal_size_limit: truncating a large WAL inside a COMMIT stalled the loop ~100 ms).
 */
const MAX_WAL_FRAMES = 262_144;
/** Pages of WAL after which the main connection checkpoints itself if the worker is gone. */
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
  timer = setTimeout(pass, behind ? 0 : workerData.intervalMs);
}
pass();
parentPort.on('message', () => {
  clearTimeout(timer);
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
  private walFrames = 0;
  private behind = 0;

  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
    private readonly synchronous: 'NORMAL' | 'FULL',
  ) {}

  start(): void {
    this.db.pragma('wal_autocheckpoint = 0');
    try {
      const driver = createRequire(import.meta.url).resolve('better-sqlite3');
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { driver, path: this.file, synchronous: this.synchronous, intervalMs: INTERVAL_MS },
      });
      worker.unref();
      this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
      worker.on('message', (progress: Progress) => {
        if (progress.log === undefined || progress.checkpointed === undefined) return;
        this.walFrames = progress.log;
        this.behind = progress.log - progress.checkpointed;
      });
      worker.once('error', () => this.fallBack());
      worker.once('exit', () => (this.worker = null));
      this.worker = worker;
    } catch {
      this.fallBack();
    }
  }

  /** False while the WAL is too long and the worker has not caught up: hold writes. */
  mayWrite(): boolean {
    return this.worker === null || this.walFrames < MAX_WAL_FRAMES || this.behind === 0;
  }

  /** Stops the worker; its connection is the last to close, so it leaves a checkpointed file. */
  async stop(): Promise<void> {
    // Held while stopping: an unref'd worker would let the process exit under our await.
    this.worker?.ref();
    this.worker?.postMessage('stop');
    await this.exited;
  }

  private fallBack(): void {
    this.worker = null;
    this.behind = 0;
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT}`);
  }
}
