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
 * it is on disk. A flush takes at most `maxWeight` tasks' worth of writes, then yields the
 * event loop, so a flood of writes cannot stall the timers of the process for long
 * (ADR 0014). While the checkpointer asks for it (`mayWrite`), the next flush waits a few
 * ms instead.
 *
 * Reservations do not wait for that commit (applyNow), so a delivery does not wait for
 * every write queued in its turn (ADR 0014): a reservation runs at once, inside the
 * transaction the next flush commits, and its deliveries are handed out right away. A
 * reservation lost in a crash before its commit costs one more delivery (the task is still
 * pending on disk), and an ack can never be committed without its reservation: it checks
 * the receipt inside its own transaction, which is the reservation's or a later one.
 */
import type Database from 'better-sqlite3';
import type { Clock, TimerToken } from '../../core/ports/index.js';
import { CountDeltas } from './count-deltas.js';

export type Apply<T> = (counts: CountDeltas) => T;

/** A write through the group commit, as the store's parts submit one (SqliteStore.write). */
export type SubmitWrite = <T>(weight: number, apply: Apply<T>, oneStatement?: boolean) => Promise<T>;

interface Entry {
  readonly weight: number;
  /** Writes with one statement at most (after any reads): SQLite undoes a failed statement itself. */
  readonly oneStatement: boolean;
  readonly apply: Apply<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** How long a write waits while the checkpointer holds writes, before asking again. */
const HOLD_MS = 2;

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

export class GroupCommit {
  /** Transactions committed so far (tests and diagnostics: n writes, how many commits). */
  committed = 0;
  private queue: Entry[] = [];
  /** A transaction begun by applyNow() and not yet committed: the next flush commits it. */
  private open = false;
  private flushTimer: TimerToken | null = null;
  private earlyWeight = 0;
  private holdTimer: TimerToken | null = null;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;
  private readonly savepoint: Database.Statement;
  private readonly release: Database.Statement;
  private readonly rollbackTo: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    /** A zero delay is the next turn of the event loop (the flush); see storeSystemClock. */
    private readonly clock: Clock,
    private readonly writeCounts: (counts: CountDeltas) => void,
    private readonly translate: (error: unknown) => Error,
    /** Tasks' worth of writes a flush takes before it yields the event loop (ADR 0014). */
    private readonly maxWeight = 4_000,
    /** Backpressure from the checkpointer: false holds the next transaction for a moment. */
    private readonly mayWrite: () => boolean = () => true,
    /**
     * Last writes of every transaction, after all its entries and outside their savepoints
     * (parking's runs, see parking.ts): if it throws, the whole transaction rolls back.
     */
    private readonly beforeCommit: () => void = () => undefined,
    /** After every COMMIT (the checkpointer schedules the pass that copies it). */
    private readonly afterCommit: () => void = () => undefined,
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
      if (this.holdTimer === null) this.flushTimer ??= this.clock.setTimer(this.flushNext, 0);
    });
  }

  /**
   * Applies a change at once, inside a transaction that stays open until the next flush
   * commits it (with whatever was queued meanwhile), and resolves *before* that commit.
   * Only for changes whose loss in a crash is harmless (reservations: the task is still pending
   * on disk and is delivered again). Everything submitted after this call resolves lands
   * in the same transaction or a later one, so a write that depends on the change (an ack
   * of a reserved task) is never committed without it. Rejects if the change fails (it
   * leaves nothing behind). Falls back to submit() while the checkpointer holds writes.
   */
  applyNow<T>(weight: number, apply: Apply<T>): Promise<T> {
    if (this.holdTimer !== null || !this.mayWrite() || !this.db.open) return this.submit(weight, apply);
    let value: T;
    try {
      if (!this.open) {
        this.begin.run();
        this.open = true;
      }
      this.savepoint.run();
      try {
        const counts = new CountDeltas();
        value = apply(counts);
        this.writeCounts(counts);
        this.release.run();
      } catch (error) {
        if (this.db.inTransaction) {
          this.rollbackTo.run();
          this.release.run();
        }
        throw error;
      }
    } catch (error) {
      // After some errors SQLite has rolled back the whole transaction, earlier early
      // changes with it: they are lost as in a crash, which is what applyNow() allows.
      if (!this.db.inTransaction) this.open = false;
      return Promise.reject(this.translate(error));
    } finally {
      this.flushTimer ??= this.open && this.holdTimer === null ? this.clock.setTimer(this.flushNext, 0) : null;
    }
    this.earlyWeight += weight;
    return Promise.resolve(value);
  }

  /** Commits everything queued, synchronously (close() uses it so nothing queued is dropped). */
  drain(): void {
    if (this.flushTimer !== null) this.clock.clearTimer(this.flushTimer);
    if (this.holdTimer !== null) this.clock.clearTimer(this.holdTimer);
    this.flushTimer = null;
    this.holdTimer = null;
    while (this.queue.length > 0 || this.open) this.commitBatch(this.takeBatch());
  }

  private readonly flushNext = (): void => this.flushOne();

  private flushOne(): void {
    this.flushTimer = null;
    if (!this.mayWrite()) {
      // Changes applied early are committed now, not held open for the whole hold.
      if (this.open) this.commitBatch([]);
      this.holdTimer = this.clock.setTimer(() => {
        this.holdTimer = null;
        this.flushOne();
      }, HOLD_MS);
      return;
    }
    this.commitBatch(this.takeBatch());
    if (this.queue.length > 0) this.flushTimer = this.clock.setTimer(this.flushNext, 0);
  }

  private takeBatch(): Entry[] {
    // Changes applied early count against the batch (the transaction holds them already),
    // but the first queued write always goes, so a stream of reservations cannot starve the rest.
    let weight = this.earlyWeight;
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
    if (batch.length === 0 && !this.open) return;
    const outcomes = this.runTransaction(batch);
    batch.forEach((entry, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) entry.resolve(outcome.value);
      else entry.reject(outcome.error);
    });
  }

  /** One outcome per entry; on a failed transaction every entry gets its error. */
  private runTransaction(batch: readonly Entry[]): Outcome[] {
    // A lone write needs no savepoint: rolling back the transaction undoes just it (unless
    // the transaction also holds changes applied early, which must not be undone with it).
    const early = this.open;
    const isolate = batch.length > 1 || early;
    this.open = false;
    this.earlyWeight = 0;
    const total = new CountDeltas();
    const outcomes: Outcome[] = [];
    try {
      if (!early || !this.db.inTransaction) this.begin.run();
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
      this.beforeCommit();
      this.commit.run();
      this.committed++;
      this.afterCommit();
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
