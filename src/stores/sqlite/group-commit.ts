/**
 * Group commit: writes submitted during one turn of the event loop share one transaction,
 * so a thousand producers calling schedule() one task at a time pay for one COMMIT (and,
 * with synchronous=FULL, one fsync) instead of a thousand.
 *
 *   turn n:     scheduleMany(a), ack(b), scheduleMany(c)   -> queued, flush set for turn n+1
 *   turn n+1:   BEGIN
 *                 SAVEPOINT; a; RELEASE
 *                 b                     (one statement: SQLite undoes it alone if it fails)
 *                 SAVEPOINT; c fails -> ROLLBACK TO (c alone is undone)
 *               counters; COMMIT                        -> a and b resolve, c rejects
 *
 * Every promise settles only after COMMIT has returned, so a resolved write is durable
 * as far as the `synchronous` setting promises. If the transaction itself fails (COMMIT,
 * an I/O error, SQLite rolling back on its own), everything in it rejects and nothing of
 * it is on disk. A flush takes at most `maxWeight` tasks' worth of writes (~25 ms of work
 * at 4,000), then yields the event loop, so a flood of writes cannot stall the timers of
 * the process for long. While the checkpointer asks for it (`mayWrite`), the next flush
 * waits a few ms instead.
 */
import type Database from 'better-sqlite3';
import { CountDeltas } from './count-deltas.js';

export type Apply<T> = (counts: CountDeltas) => T;

interface Entry {
  readonly weight: number;
  /** Writes with one statement at most (after any reads): SQLite undoes a failed statement itself. */
  readonly oneStatement: boolean;
  readonly apply: Apply<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

export class GroupCommit {
  /** Transactions committed so far (tests and diagnostics: n writes, how many commits). */
  committed = 0;
  private queue: Entry[] = [];
  private flushTimer: NodeJS.Immediate | null = null;
  private holdTimer: NodeJS.Timeout | null = null;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;
  private readonly savepoint: Database.Statement;
  private readonly release: Database.Statement;
  private readonly rollbackTo: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly writeCounts: (counts: CountDeltas) => void,
    private readonly translate: (error: unknown) => Error,
    private readonly maxWeight = 4_000,
    /** Backpressure from the checkpointer: false holds the next transaction for a moment. */
    private readonly mayWrite: () => boolean = () => true,
  ) {
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
    this.savepoint = db.prepare('SAVEPOINT item');
    this.release = db.prepare('RELEASE item');
    this.rollbackTo = db.prepare('ROLLBACK TO item');
  }

  /**
   * Queues a change; resolves with its result once committed. `weight`: rows it writes,
   * about. `oneStatement`: the change issues at most one write statement, as its last step,
   * so it needs no savepoint (a failed statement is undone by SQLite, the rest stays).
   */
  submit<T>(weight: number, apply: Apply<T>, oneStatement = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ weight, oneStatement, apply, resolve: resolve as (value: unknown) => void, reject });
      if (this.holdTimer === null) this.flushTimer ??= setImmediate(() => this.flushOne());
    });
  }

  /** Commits everything queued, synchronously (close() uses it so nothing queued is dropped). */
  drain(): void {
    if (this.flushTimer !== null) clearImmediate(this.flushTimer);
    if (this.holdTimer !== null) clearTimeout(this.holdTimer);
    this.flushTimer = null;
    this.holdTimer = null;
    while (this.queue.length > 0) this.commitBatch(this.takeBatch());
  }

  private flushOne(): void {
    this.flushTimer = null;
    if (!this.mayWrite()) {
      this.holdTimer = setTimeout(() => {
        this.holdTimer = null;
        this.flushOne();
      }, 2);
      return;
    }
    this.commitBatch(this.takeBatch());
    if (this.queue.length > 0) this.flushTimer = setImmediate(() => this.flushOne());
  }

  private takeBatch(): Entry[] {
    let weight = 0;
    let end = 0;
    while (end < this.queue.length && (end === 0 || weight + this.queue[end]!.weight <= this.maxWeight)) {
      weight += this.queue[end]!.weight;
      end++;
    }
    const batch = this.queue.slice(0, end);
    this.queue = this.queue.slice(end);
    return batch;
  }

  private commitBatch(batch: readonly Entry[]): void {
    if (batch.length === 0) return;
    const outcomes = this.runTransaction(batch);
    batch.forEach((entry, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) entry.resolve(outcome.value);
      else entry.reject(outcome.error);
    });
  }

  /** One outcome per entry; on a failed transaction every entry gets its error. */
  private runTransaction(batch: readonly Entry[]): Outcome[] {
    // A lone write needs no savepoint: rolling back the transaction undoes just it.
    const isolate = batch.length > 1;
    const total = new CountDeltas();
    const outcomes: Outcome[] = [];
    try {
      this.begin.run();
      for (const entry of batch) {
        const counts = new CountDeltas();
        const guard = isolate && !entry.oneStatement;
        if (guard) this.savepoint.run();
        try {
          const value = entry.apply(counts);
          if (guard) this.release.run();
          counts.mergeInto(total);
          outcomes.push({ ok: true, value });
        } catch (error) {
          // After some errors (SQLITE_FULL, IOERR, NOMEM) SQLite has already rolled back
          // the whole transaction: going on would autocommit the rest one by one.
          if (!isolate || !this.db.inTransaction) throw error;
          if (guard) {
            this.rollbackTo.run();
            this.release.run();
          }
          outcomes.push({ ok: false, error: this.translate(error) });
        }
      }
      this.writeCounts(total);
      this.commit.run();
      this.committed++;
      return outcomes;
    } catch (error) {
      if (this.db.inTransaction) {
        try {
          this.rollback.run();
        } catch {
          // The connection is broken; the error below is the one that matters.
        }
      }
      const failure = this.translate(error);
      return batch.map(() => ({ ok: false, error: failure }));
    }
  }
}
