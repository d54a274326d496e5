/**
 * The SQLite store's tasks role (`store.tasks`): every task a row of the file, every change
 * a write through the store's group commit (group-commit.ts), reads directly on the
 * connection. The store (sqlite-store.ts) holds it with the record roles, and closes.
 *
 * Reads (get, list, stats, loadDue) run directly on the connection: one connection and
 * one thread mean they see every committed write and never a half-applied one.
 */
import { cutPage, mapLazily } from '../../core/task/list-page.js';
import { DelayQError } from '../../core/errors.js';
import { statsOfCounters } from '../../core/task/counter-deltas.js';
import { decideExtend, decideFailure, deferrableOr, failureOutcome, movableOr, nackOutcomeOf, type FailureCause } from '../../core/task/decide.js';
import { historyError } from '../../core/task/history.js';
import { reserveRefsByIds } from '../../core/batch-fallbacks.js';
import { makeReceipt } from '../../core/task/lifecycle.js';
import { mayQuarantine } from '../../core/task/undecodable.js';
import { MAX_ERROR_LENGTH, storableText } from '../../core/text.js';
import { nextNonce } from '../shared/nonce.js';
import { laneOf, type ReservedTask, type NewTaskRecord, type TaskRecord, type TimerRef } from '../../core/task/model.js';
import type { StoreAckOutcome, TopicPurgeRequest, TopicPurgeStep, AckRequest, CancelDeadOutcome, StoreCancelOutcome, DeferOutcome, DeferRequest, DueCursor, DueHistogram, DueHistogramQuery, NackOutcome, ExpireOutcome, ExtendOutcome, ExtendRequest, ListFilter, QuarantineRequest, RescheduleOutcome, RetryDeadOutcome, ScheduleOutcome, StoreStats, TaskRoles, FlowLease, NackRequest } from '../../core/ports/index.js';
import type { CountDeltas } from './count-deltas.js';
import { sqliteDueHistogram } from './due-histogram.js';
import type { GroupCommit, SubmitWrite } from './group-commit.js';
import type { TaskInserter } from './inserts.js';
import type { Parking } from './parking.js';
import { backoffOf, dueRef, runRef, toRecord, ttrRef } from './rows.js';
import type { Statements } from './statements.js';

/** Rows one purge transaction deletes at most, so the janitor never holds the writer long. */
const PURGE_BATCH = 1_000;
/** A purgeTopic step reads up to this many rows per row it may delete. */
const PURGE_LOOKS_PER_LIMIT = 4;

/** What the tasks role works with: the store's statements and writer, and its open state. */
export interface SqliteTaskParts {
  readonly path: string;
  readonly sql: Statements;
  readonly writer: GroupCommit;
  readonly parking: Parking;
  readonly inserter: TaskInserter;
  /** A write through the group commit; rejects QUEUE_CLOSED once the store is closed. */
  readonly write: SubmitWrite;
  /** True once the store is closed. */
  isClosed(): boolean;
}

export class SqliteTasks implements TaskRoles {
  private readonly path: string;
  private readonly sql: Statements;
  private readonly writer: GroupCommit;
  private readonly parking: Parking;
  private readonly inserter: TaskInserter;
  private readonly write: SubmitWrite;
  private readonly bucketFor = (runAt: number): number | null => this.parking.bucketFor(runAt);

  constructor(private readonly parts: SqliteTaskParts) {
    this.path = parts.path;
    this.sql = parts.sql;
    this.writer = parts.writer;
    this.parking = parts.parking;
    this.inserter = parts.inserter;
    this.write = parts.write;
  }

  private get closed(): boolean {
    return this.parts.isClosed();
  }

  // ---------------------------------------------------------------------------------
  // Producers

  schedule(tasks: readonly NewTaskRecord[], now: number): Promise<ScheduleOutcome[]> {
    if (tasks.length !== 1) return this.write(tasks.length, (counts) => this.inserter.insert(tasks, now, this.bucketFor, counts));
    const task = tasks[0]!;
    return this.write(
      1,
      (counts): ScheduleOutcome[] => {
        const { backoff } = task;
        const parkBucket = this.parking.bucketFor(task.runAt);
        const { changes, lastInsertRowid } = this.sql.insert.run(
          task.id,
          task.topic,
          task.runAt,
          parkBucket === null ? task.runAt : null,
          parkBucket,
          task.maxAttempts,
          task.ttrMs,
          backoff.baseMs,
          backoff.factor,
          backoff.maxMs,
          backoff.jitter,
          now,
          now,
          task.payload,
        );
        if (changes === 0) {
          const existing = this.sql.runAtOf.get(task.id);
          return [{ id: task.id, runAt: existing?.run_at ?? task.runAt, created: false, ref: null }];
        }
        const seq = Number(lastInsertRowid);
        // Not a write: the run is filed when the transaction commits (Parking.flush).
        if (parkBucket !== null) {
          this.parking.record(parkBucket, seq);
          counts.parked(task.topic, task.runAt);
        }
        counts.moved(task.topic, null, 'pending');
        if (task.url !== undefined) this.sql.setUrl.run(task.url, seq);
        if (task.trace !== undefined) this.sql.setTrace.run(task.trace, seq);
        if (task.priority !== undefined) this.sql.setPriority.run(task.priority, seq);
        return [{ id: task.id, runAt: task.runAt, created: true, ref: runRef(task.id, laneOf(task.topic, task.url), task.runAt, seq, task.priority) }];
      },
      true,
    );
  }

  cancel(id: string, now: number): Promise<StoreCancelOutcome> {
    return this.write(1, (counts) => this.cancelRow(id, now, counts), true);
  }

  /** The cancels of one call share its savepoint: if one statement fails, none of them stays. */
  cancelMany(ids: readonly string[], now: number): Promise<StoreCancelOutcome[]> {
    if (ids.length === 0) return this.closed ? Promise.reject(closedError(this.path)) : Promise.resolve([]);
    return this.write(ids.length, (counts) => ids.map((id) => this.cancelRow(id, now, counts)));
  }

  private cancelRow(id: string, now: number, counts: CountDeltas): StoreCancelOutcome {
    const row = movableOr(this.sql.control.get(id), 'cancel', 'not_pending');
    if (typeof row === 'string') return { status: row };
    this.sql.cancel.run(now, row.seq);
    counts.transition(row.topic, row.state, 'cancel');
    return { status: 'cancelled', topic: row.topic };
  }

  reschedule(id: string, runAt: number, now: number): Promise<RescheduleOutcome> {
    return this.write(1, (): RescheduleOutcome => {
      const row = movableOr(this.sql.control.get(id), 'reschedule', 'not_pending');
      if (typeof row === 'string') return { status: row };
      this.sql.reschedule.run(runAt, runAt, now, row.seq);
      return { status: 'rescheduled', ref: runRef(id, laneOf(row.topic, row.url), runAt, row.seq, row.priority) };
    }, true);
  }

  // ---------------------------------------------------------------------------------
  // The scheduler's feed

  async loadDue(until: number, after: DueCursor | null, limit: number): Promise<TimerRef[]> {
    this.assertOpen();
    await this.parking.prepare(until);
    // SQLite compares an INTEGER column with a REAL bound correctly, Infinity included.
    const rows = after === null ? this.sql.dueFirst.all(until, limit) : this.sql.dueAfter.all(until, after.dueAt, after.seq, limit);
    return rows.map(dueRef);
  }

  // ---------------------------------------------------------------------------------
  // Consumers

  /** A ref spares this store nothing: the row is read by id either way. */
  reserveRefs(refs: readonly TimerRef[], now: number, ttrMs?: number): Promise<ReservedTask[]> {
    return reserveRefsByIds(this, refs, now, ttrMs);
  }

  reserve(ids: readonly string[], now: number, ttrMs?: number): Promise<ReservedTask[]> {
    if (this.closed) return Promise.reject(closedError(this.path));
    // Applied at once and handed out before it commits: see GroupCommit.applyNow and
    // docs/sqlite.md ("Durability"). A reservation lost in a crash leaves the task pending.
    return this.writer.applyNow(Math.max(1, ids.length), (counts) => {
      const reserved: ReservedTask[] = [];
      for (const id of ids) {
        const row = this.sql.reserveRead.get(id);
        if (!row || row[2] !== 'pending' || row[3] > now) continue;
        const [seq, topic, state, runAt, previousAttempts, maxAttempts, taskTtrMs, payload, url, trace] = row;
        const attempts = previousAttempts + 1;
        const receipt = makeReceipt(attempts, nextNonce());
        const reservedUntil = now + (ttrMs ?? taskTtrMs);
        this.sql.reserve.run(attempts, receipt, reservedUntil, reservedUntil, now, seq);
        counts.transition(topic, state, 'reserve');
        if (trace !== null) reserved.push({ id, topic, payload, runAt, attempts, maxAttempts, receipt, reservedUntil, url, trace });
        else reserved.push(url === null ? { id, topic, payload, runAt, attempts, maxAttempts, receipt, reservedUntil } : { id, topic, payload, runAt, attempts, maxAttempts, receipt, reservedUntil, url });
      }
      return reserved;
    });
  }

  ack(id: string, receipt: string, now: number): Promise<StoreAckOutcome> {
    return this.write(1, (counts) => this.ackRow(id, receipt, now, counts), true);
  }

  /** The acks of one call share its savepoint: if one statement fails, none of them stays. */
  ackMany(acks: readonly AckRequest[], now: number): Promise<StoreAckOutcome[]> {
    if (acks.length === 0) return this.closed ? Promise.reject(closedError(this.path)) : Promise.resolve([]);
    return this.write(acks.length, (counts): StoreAckOutcome[] => {
      const outcomes = new Array<StoreAckOutcome>(acks.length);
      for (let i = 0; i < acks.length; i++) outcomes[i] = this.ackRow(acks[i]!.id, acks[i]!.receipt, now, counts, acks[i]!.topic);
      return outcomes;
    });
  }

  /**
   * One statement on the hot path; a miss reads once more to say why. A caller that knows
   * the task's topic (a worker, from its delivery) spares the UPDATE its RETURNING.
   */
  private ackRow(id: string, receipt: string, now: number, counts: CountDeltas, knownTopic?: string): StoreAckOutcome {
    const topic =
      knownTopic === undefined
        ? this.sql.ack.get(now, 'acked', null, now, id, receipt)?.topic
        : this.sql.ackKnownTopic.run(now, 'acked', null, now, id, receipt).changes > 0
          ? knownTopic
          : undefined;
    if (topic === undefined) {
      const row = this.sql.ackedReceiptOf.get(id);
      if (row === undefined) return { status: 'not_found' };
      // The ack that completed the task, sent again (its reply was lost): it did succeed.
      return { status: row.state === 'completed' && row.acked_receipt === receipt ? 'already_acked' : 'stale' };
    }
    counts.transition(topic, 'reserved', 'ack');
    return { status: 'acked', topic };
  }

  nack({ id, receipt, now, ...options }: NackRequest): Promise<NackOutcome> {
    return this.write(1, (counts) => nackOutcomeOf(this.settleFailure(id, receipt, now, { kind: 'nack', ...options }, counts)), true);
  }

  expire(id: string, receipt: string, now: number): Promise<ExpireOutcome> {
    return this.write(1, (counts) => this.settleFailure(id, receipt, now, { kind: 'expire' }, counts), true);
  }

  /** One read and one UPDATE by seq per request, in one savepoint: the decision is core/task/decide.ts's. */
  extend(requests: readonly ExtendRequest[], now: number): Promise<ExtendOutcome[]> {
    if (requests.length === 0) return this.closed ? Promise.reject(closedError(this.path)) : Promise.resolve([]);
    return this.write(requests.length, (): ExtendOutcome[] =>
      requests.map(({ id, receipt, ttrMs }): ExtendOutcome => {
        const row = this.sql.control.get(id);
        const decision = decideExtend(row && { state: row.state, reservedUntil: row.reserved_until }, row?.receipt === receipt, now);
        if (decision !== 'go' || row === undefined) return { status: decision === 'not_found' ? 'not_found' : 'stale' };
        const reservedUntil = now + (ttrMs ?? row.ttr_ms);
        this.sql.extend.run(reservedUntil, reservedUntil, row.seq);
        return { status: 'extended', reservedUntil };
      }),
    );
  }

  defer({ id, receipt, runAt, now }: DeferRequest): Promise<DeferOutcome> {
    return this.write(1, (counts): DeferOutcome => {
      const found = this.sql.control.get(id);
      const row = deferrableOr(found, found?.receipt === receipt);
      if (typeof row === 'string') return { status: row };
      this.sql.defer.run(Math.max(0, row.attempts - 1), runAt, runAt, now, row.seq);
      counts.transition(row.topic, row.state, 'defer');
      return { status: 'deferred', ref: runRef(id, laneOf(row.topic, row.url), runAt, row.seq, row.priority) };
    }, true);
  }

  /** A range of the due index (a reservation's due_at is its end), its rows read for the topic: TopicLimitStore.reservedLeases, through the store's topics role. */
  reservedLeases(topic: string, now: number, until: number): FlowLease[] {
    return this.sql.reservedOf.all(now, until, topic).map((row) => ({ key: row.receipt, until: row.reserved_until }));
  }

  // ---------------------------------------------------------------------------------
  // Operators

  async get(id: string): Promise<TaskRecord | null> {
    this.assertOpen();
    const row = this.sql.full.get(id);
    return row ? toRecord(row) : null;
  }

  async list(filter: ListFilter): Promise<TaskRecord[]> {
    this.assertOpen();
    const after = filter.afterId ?? '';
    const topic = filter.topic ?? null;
    // Iterated: with a byte bound (maxSize) the rows past the page are never read.
    const rows =
      filter.state === 'dead'
        ? this.sql.listDead.iterate({ after, topic, limit: filter.limit })
        : this.sql.list.iterate({ after, topic, state: filter.state ?? null, limit: filter.limit });
    return cutPage(mapLazily(rows, toRecord), filter.limit, filter.maxSize);
  }

  async stats(): Promise<StoreStats> {
    this.assertOpen();
    return statsOfCounters(this.sql.counts.all());
  }

  /** See due-histogram.ts: an index range, and the parked counts by the hour. */
  async dueHistogram(query: DueHistogramQuery): Promise<DueHistogram> {
    this.assertOpen();
    return sqliteDueHistogram(this.sql, this.parking, query);
  }

  quarantine(tasks: readonly QuarantineRequest[], now: number): Promise<void> {
    return this.write(tasks.length, (counts) => {
      for (const { id, receipt, error } of tasks) {
        const row = this.sql.control.get(id);
        if (row === undefined || !mayQuarantine(row.state, receipt, row.receipt === receipt)) continue;
        this.sql.quarantine.run(storableText(error, MAX_ERROR_LENGTH), now, row.seq);
        counts.transition(row.topic, row.state, 'quarantine');
      }
    });
  }

  cancelDead(id: string, now: number): Promise<CancelDeadOutcome> {
    return this.write(1, (counts): CancelDeadOutcome => {
      const row = movableOr(this.sql.control.get(id), 'cancelDead', 'not_dead');
      if (typeof row === 'string') return row;
      this.sql.cancelDead.run(now, row.seq);
      counts.transition(row.topic, row.state, 'cancelDead');
      return 'cancelled';
    }, true);
  }

  retryDead(id: string, runAt: number, now: number): Promise<RetryDeadOutcome> {
    return this.write(1, (counts): RetryDeadOutcome => {
      const row = movableOr(this.sql.control.get(id), 'retryDead', 'not_dead');
      if (typeof row === 'string') return { status: row };
      this.sql.retryDead.run(runAt, runAt, now, row.seq);
      counts.transition(row.topic, row.state, 'retryDead');
      return { status: 'retried', ref: runRef(id, laneOf(row.topic, row.url), runAt, row.seq, row.priority) };
    }, true);
  }

  async purge(before: number, limit: number): Promise<number> {
    let deleted = 0;
    while (deleted < limit) {
      const batch = Math.min(PURGE_BATCH, limit - deleted);
      const n = await this.write(batch, (counts) => {
        const rows = this.sql.purge.all(before, batch);
        for (const { topic, state } of rows) counts.moved(topic, state, null);
        return rows.length;
      }, true);
      deleted += n;
      if (n < batch) break;
    }
    return deleted;
  }

  /**
   * A step reads the next rows in seq order (the primary key: no index of topics is kept
   * for this, so no write pays for one), at most PURGE_LOOKS_PER_LIMIT * limit, and deletes
   * those of the topic and state in the same transaction; the cursor is the last seq read.
   * Deleting a parked row takes it out of parked_days (a trigger); its parked run skips it.
   */
  purgeTopic({ topic, state, cursor, limit }: TopicPurgeRequest): Promise<TopicPurgeStep> {
    const after = cursor === null ? 0 : Number(cursor);
    const window = PURGE_LOOKS_PER_LIMIT * limit;
    return this.write(limit, (counts): TopicPurgeStep => {
      const rows = this.sql.purgeScan.all(Number.isSafeInteger(after) ? after : 0, window);
      const ids: string[] = [];
      const runs: TimerRef[] = [];
      let last = after;
      for (const row of rows) {
        if (ids.length >= limit) return { ids, runs, next: String(last) };
        last = row.seq;
        if (row.topic !== topic || !(row.state === state || (state === 'completed' && row.state === 'cancelled'))) continue;
        const deleted = this.sql.deleteSeq.get(row.seq)!;
        counts.moved(row.topic, row.state, null);
        ids.push(row.id);
        if (row.state === 'pending') runs.push(runRef(row.id, laneOf(row.topic, deleted.url ?? undefined), deleted.run_at, row.seq));
      }
      return { ids, runs, next: rows.length < window ? null : String(last) };
    });
  }

  // ---------------------------------------------------------------------------------

  /** A failed attempt (nack, expiry), as core/task/decide.ts decides it. */
  private settleFailure(id: string, receipt: string, now: number, cause: FailureCause, counts: CountDeltas): ExpireOutcome {
    const row = this.sql.control.get(id);
    const facts = row && { state: row.state, attempts: row.attempts, maxAttempts: row.max_attempts, backoff: backoffOf(row), reservedUntil: row.reserved_until };
    const decision = decideFailure(facts, row?.receipt === receipt, now, cause);
    if (decision.status === 'not_found' || decision.status === 'stale') return { status: decision.status };
    // Narrows `row`: a decision to retry or bury was made on a row that exists.
    if (row === undefined) return { status: 'not_found' };
    if (decision.status === 'held') return { status: 'held', ref: ttrRef(id, row, decision.reservedUntil) };
    const outcome = failureOutcome(cause);
    const entryError = historyError(decision.error);
    if (decision.status === 'dead') {
      this.sql.bury.run(now, outcome, entryError, decision.error, now, row.seq);
      counts.transition(row.topic, row.state, 'bury');
      return { status: 'dead', topic: row.topic };
    }
    this.sql.retry.run(now, outcome, entryError, decision.runAt, decision.runAt, decision.error, now, row.seq);
    counts.transition(row.topic, row.state, 'retry');
    return { status: 'retrying', ref: runRef(id, laneOf(row.topic, row.url), decision.runAt, row.seq, row.priority), topic: row.topic };
  }

  private assertOpen(): void {
    if (this.closed) throw closedError(this.path);
  }
}

export function closedError(path: string): DelayQError {
  return new DelayQError('QUEUE_CLOSED', `sqlite store ${path} is closed`, { path });
}
