/**
 * The durable embedded store: every task is a row of one SQLite file (WAL mode), every
 * write commits through the group-commit writer before its promise resolves, and the
 * engine keeps only the next `horizonMs` of the schedule in memory, reading the rest by a
 * range scan of the (due_at, seq) index as time moves on.
 *
 * Reads (get, list, stats, loadDue) run directly on the connection: one connection and
 * one thread mean they see every committed write and never a half-applied one.
 */
import type Database from 'better-sqlite3';
import { DelayQError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { PushSubscription } from '../../core/push.js';
import { decideDefer, decideFailure, decideMove, type FailureCause } from '../../core/task/decide.js';
import { reserveRefsByIds } from '../../core/batch-fallbacks.js';
import { makeReceipt } from '../../core/task/lifecycle.js';
import { nextNonce } from '../shared/nonce.js';
import { decodedOrWarn } from '../decode-or-warn.js';
import { TASK_STATES, laneOf, type ReservedTask, type NewTaskRecord, type TaskRecord, type TaskState, type TimerRef } from '../../core/task/model.js';
import type { AckOutcome, AckRequest, CancelDeadOutcome, CancelOutcome, DeferOutcome, Clock, DueCursor, DueHistogram, DueHistogramQuery, StoreNackOptions, NackOutcome, Logger, ListFilter, RescheduleOutcome, RetryDeadOutcome, ScheduleOutcome, StoreStats, TaskStore } from '../../core/ports/index.js';
import { byTopic, decodePushSubscription, encodePushSubscription } from '../push-subscription-codec.js';
import { byId, decodeSchedule, decodeSchedules, encodeSchedule } from '../schedule-codec.js';
import type { ScheduleRecord } from '../../core/schedule/model.js';
import { type ScheduleSwap } from '../../core/ports/index.js';
import { inWholeHours, PARKED_COUNT_GRAIN_MS } from '../../core/due-histogram.js';
import { swapChangesDefinition } from '../../core/schedule/swap.js';
import type { CountDeltas } from './count-deltas.js';
import { translate, type Connection } from './connection.js';
import { GroupCommit } from './group-commit.js';
import { TaskInserter } from './inserts.js';
import { Parking } from './parking.js';
import { backoffOf, dueRef, runRef, toRecord } from './rows.js';
import { prepareStatements, type Statements } from './statements.js';

/** Rows one purge transaction deletes at most, so the janitor never holds the writer long. */
const PURGE_BATCH = 1_000;

export class SqliteStore implements TaskStore {
  readonly description: string;
  /** One process owns the file (an exclusive lock, STORE_LOCKED for a second). */
  readonly shared = null;
  readonly timerHomes = null;
  private readonly db: Database.Database;
  private readonly sql: Statements;
  private readonly writer: GroupCommit;
  private readonly parking: Parking;
  private readonly inserter: TaskInserter;
  private readonly bucketFor = (runAt: number): number | null => this.parking.bucketFor(runAt);
  private closed = false;
  /** schedulesVersion: counts the schedule writes another reader would have to re-read. */
  private schedulesChanged = 0;

  constructor(
    private readonly connection: Connection,
    readonly path: string,
    readonly horizonMs: number,
    clock: Clock,
    private readonly logger: Logger = silentLogger,
  ) {
    this.description = `sqlite:${path}`;
    this.db = connection.db;
    this.sql = prepareStatements(this.db);
    this.writer = new GroupCommit(
      this.db,
      clock,
      (counts) => {
        for (const { topic, state, n } of counts.entries()) this.sql.addCount.run(topic, state, n);
        for (const { day, topic, hours } of counts.parkedEntries()) this.sql.addParkedDay.run(day, topic, ...hours);
      },
      (error) => translate(error, path, 'write'),
      4_000, // maxWeight: a flush's writes, then the event loop's turn (ADR 0014)
      () => connection.mayWrite(),
      () => this.parking.flush(),
      () => connection.committed(),
    );
    this.parking = new Parking(this.sql, (weight, apply) => this.write(weight, apply), (error) =>
      logger.warn({ err: error, path }, 'sqlite: moving parked tasks ahead of time failed; the next load retries'),
    );
    this.inserter = new TaskInserter(this.db, (bucket, seq, topic, runAt, counts) => {
      this.parking.record(bucket, seq);
      counts.parked(topic, runAt);
    });
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
        counts.add(task.topic, 'pending', +1);
        if (task.url !== undefined) this.sql.setUrl.run(task.url, seq);
        return [{ id: task.id, runAt: task.runAt, created: true, ref: runRef(task.id, laneOf(task.topic, task.url), task.runAt, seq) }];
      },
      true,
    );
  }

  cancel(id: string, now: number): Promise<CancelOutcome> {
    return this.write(1, (counts) => this.cancelRow(id, now, counts), true);
  }

  /** The cancels of one call share its savepoint: if one statement fails, none of them stays. */
  cancelMany(ids: readonly string[], now: number): Promise<CancelOutcome[]> {
    if (ids.length === 0) return this.closed ? Promise.reject(closedError(this.path)) : Promise.resolve([]);
    return this.write(ids.length, (counts) => ids.map((id) => this.cancelRow(id, now, counts)));
  }

  private cancelRow(id: string, now: number, counts: CountDeltas): CancelOutcome {
    const row = this.sql.control.get(id);
    const decision = decideMove(row?.state, 'cancel', 'not_pending');
    if (decision !== 'go' || row === undefined) return decision === 'go' ? 'not_found' : decision;
    this.sql.cancel.run(now, row.seq);
    counts.move(row.topic, 'pending', 'cancelled');
    return 'cancelled';
  }

  reschedule(id: string, runAt: number, now: number): Promise<RescheduleOutcome> {
    return this.write(1, (): RescheduleOutcome => {
      const row = this.sql.control.get(id);
      const decision = decideMove(row?.state, 'reschedule', 'not_pending');
      if (decision !== 'go' || row === undefined) return { status: decision === 'go' ? 'not_found' : decision };
      this.sql.reschedule.run(runAt, runAt, now, row.seq);
      return { status: 'rescheduled', ref: runRef(id, laneOf(row.topic, row.url), runAt, row.seq) };
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
        const [seq, topic, , runAt, previousAttempts, maxAttempts, taskTtrMs, payload, url] = row;
        const attempts = previousAttempts + 1;
        const receipt = makeReceipt(attempts, nextNonce());
        const reservedUntil = now + (ttrMs ?? taskTtrMs);
        this.sql.reserve.run(attempts, receipt, reservedUntil, reservedUntil, now, seq);
        counts.move(topic, 'pending', 'reserved');
        reserved.push(url === null ? { id, topic, payload, runAt, attempts, maxAttempts, receipt, reservedUntil } : { id, topic, payload, runAt, attempts, maxAttempts, receipt, reservedUntil, url });
      }
      return reserved;
    });
  }

  ack(id: string, receipt: string, now: number): Promise<AckOutcome> {
    return this.write(1, (counts) => this.ackRow(id, receipt, now, counts), true);
  }

  /** The acks of one call share its savepoint: if one statement fails, none of them stays. */
  ackMany(acks: readonly AckRequest[], now: number): Promise<AckOutcome[]> {
    if (acks.length === 0) return this.closed ? Promise.reject(closedError(this.path)) : Promise.resolve([]);
    return this.write(acks.length, (counts): AckOutcome[] => {
      const outcomes = new Array<AckOutcome>(acks.length);
      for (let i = 0; i < acks.length; i++) outcomes[i] = this.ackRow(acks[i]!.id, acks[i]!.receipt, now, counts, acks[i]!.topic);
      return outcomes;
    });
  }

  /**
   * One statement on the hot path; a miss reads once more to say why. A caller that knows
   * the task's topic (a worker, from its delivery) spares the UPDATE its RETURNING.
   */
  private ackRow(id: string, receipt: string, now: number, counts: CountDeltas, knownTopic?: string): AckOutcome {
    const topic =
      knownTopic === undefined
        ? this.sql.ack.get(now, id, receipt)?.topic
        : this.sql.ackKnownTopic.run(now, id, receipt).changes > 0
          ? knownTopic
          : undefined;
    if (topic === undefined) {
      const row = this.sql.ackedReceiptOf.get(id);
      if (row === undefined) return 'not_found';
      // The ack that completed the task, sent again (its reply was lost): it did succeed.
      return row.state === 'completed' && row.acked_receipt === receipt ? 'acked' : 'stale';
    }
    counts.move(topic, 'reserved', 'completed');
    return 'acked';
  }

  nack(id: string, receipt: string, now: number, options: StoreNackOptions): Promise<NackOutcome> {
    return this.write(1, (counts) => this.settleFailure(id, receipt, now, { kind: 'nack', ...options }, counts), true);
  }

  expire(id: string, receipt: string, now: number): Promise<NackOutcome> {
    return this.write(1, (counts) => this.settleFailure(id, receipt, now, { kind: 'expire' }, counts), true);
  }

  defer(id: string, receipt: string, runAt: number, now: number): Promise<DeferOutcome> {
    return this.write(1, (counts): DeferOutcome => {
      const row = this.sql.control.get(id);
      const decision = decideDefer(row?.state, row?.receipt === receipt);
      if (decision !== 'go' || row === undefined) return { status: decision === 'go' ? 'not_found' : decision };
      this.sql.defer.run(Math.max(0, row.attempts - 1), runAt, runAt, now, row.seq);
      counts.move(row.topic, 'reserved', 'pending');
      return { status: 'deferred', ref: runRef(id, laneOf(row.topic, row.url), runAt, row.seq) };
    }, true);
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
    const rows =
      filter.state === 'dead'
        ? this.sql.listDead.all({ after, topic, limit: filter.limit })
        : this.sql.list.all({ after, topic, state: filter.state ?? null, limit: filter.limit });
    return rows.map(toRecord);
  }

  async stats(): Promise<StoreStats> {
    this.assertOpen();
    const byState: Record<TaskState, number> = { pending: 0, reserved: 0, completed: 0, dead: 0, cancelled: 0 };
    const byTopic: Record<string, Partial<Record<TaskState, number>>> = {};
    for (const { topic, state, n } of this.sql.counts.all()) {
      if (!TASK_STATES.includes(state)) continue;
      byState[state] += n;
      (byTopic[topic] ??= {})[state] = n;
    }
    return { byState, byTopic };
  }

  /**
   * A range of the index tasks_due, grouped by bucket: it reads the index entries in the
   * range (and each one's row, for its state and topic), never the rest of the table. Parked
   * tasks (due beyond the parking frontier, ~18.6 to 37 h ahead) are not in that index but
   * are counted per hour of runAt in parked_days (0009): buckets of whole hours, from and
   * to on the hour, count them too and cover the whole range; finer buckets are complete
   * below the frontier.
   */
  async dueHistogram(query: DueHistogramQuery): Promise<DueHistogram> {
    this.assertOpen();
    const { from, to, bucketMs, topic } = query;
    const counts = new Array<number>(Math.ceil((to - from) / bucketMs)).fill(0);
    const rows = topic === undefined ? this.sql.dueBuckets.all(from, bucketMs, from, to) : this.sql.dueBucketsOfTopic.all(from, bucketMs, from, to, topic);
    for (const { b, n } of rows) counts[b] = n;
    const indexedUntil = Math.min(to, Math.max(from, this.parking.indexedUntil()));
    if (!inWholeHours(query)) return { counts, coveredUntil: indexedUntil };
    const [firstHour, endHour] = [from / PARKED_COUNT_GRAIN_MS, to / PARKED_COUNT_GRAIN_MS];
    const [firstDay, endDay] = [Math.floor(firstHour / 24), Math.ceil(endHour / 24)];
    const days = topic === undefined ? this.sql.parkedDays.all(firstDay, endDay) : this.sql.parkedDaysOfTopic.all(firstDay, endDay, topic);
    for (const row of days) {
      const day = row[0]!;
      for (let h = 0; h < 24; h++) {
        const hour = day * 24 + h;
        if (row[h + 1] !== 0 && hour >= firstHour && hour < endHour) counts[Math.floor(((hour - firstHour) * PARKED_COUNT_GRAIN_MS) / bucketMs)]! += row[h + 1]!;
      }
    }
    return { counts, coveredUntil: to };
  }

  cancelDead(id: string, now: number): Promise<CancelDeadOutcome> {
    return this.write(1, (counts): CancelDeadOutcome => {
      const row = this.sql.control.get(id);
      const decision = decideMove(row?.state, 'cancelDead', 'not_dead');
      if (decision !== 'go' || row === undefined) return decision === 'go' ? 'not_found' : decision;
      this.sql.cancelDead.run(now, row.seq);
      counts.move(row.topic, 'dead', 'cancelled');
      return 'cancelled';
    }, true);
  }

  retryDead(id: string, runAt: number, now: number): Promise<RetryDeadOutcome> {
    return this.write(1, (counts): RetryDeadOutcome => {
      const row = this.sql.control.get(id);
      const decision = decideMove(row?.state, 'retryDead', 'not_dead');
      if (decision !== 'go' || row === undefined) return { status: decision === 'go' ? 'not_found' : decision };
      this.sql.retryDead.run(runAt, runAt, now, row.seq);
      counts.move(row.topic, 'dead', 'pending');
      return { status: 'retried', ref: runRef(id, laneOf(row.topic, row.url), runAt, row.seq) };
    }, true);
  }

  async purge(before: number, limit: number): Promise<number> {
    let deleted = 0;
    while (deleted < limit) {
      const batch = Math.min(PURGE_BATCH, limit - deleted);
      const n = await this.write(batch, (counts) => {
        const rows = this.sql.purge.all(before, batch);
        for (const { topic, state } of rows) counts.add(topic, state, -1);
        return rows.length;
      }, true);
      deleted += n;
      if (n < batch) break;
    }
    return deleted;
  }

  // ---------------------------------------------------------------------------------
  // Push subscriptions: written through the group commit like any task change, so a put
  // or delete resolves only once it is as durable as a schedule.

  putPushSubscription(subscription: PushSubscription): Promise<void> {
    const json = encodePushSubscription(subscription);
    return this.write(1, () => void this.sql.putPush.run(subscription.topic, json, subscription.updatedAt), true);
  }

  async getPushSubscription(topic: string): Promise<PushSubscription | null> {
    this.assertOpen();
    const json = this.sql.getPush.get(topic);
    return json === undefined ? null : this.decodePush(topic, json);
  }

  async listPushSubscriptions(): Promise<PushSubscription[]> {
    this.assertOpen();
    const subscriptions: PushSubscription[] = [];
    for (const [topic, json] of this.sql.listPush.all()) {
      const subscription = this.decodePush(topic, json);
      if (subscription !== null) subscriptions.push(subscription);
    }
    return subscriptions.sort(byTopic);
  }

  deletePushSubscription(topic: string): Promise<boolean> {
    return this.write(1, () => this.sql.deletePush.run(topic).changes > 0, true);
  }

  /** A row that is not a subscription is skipped, not thrown: one bad row must not stop the pushes of every topic. */
  private decodePush(topic: string, json: string): PushSubscription | null {
    return decodedOrWarn(decodePushSubscription(topic, json), 'push subscription', this.description, { path: this.path, topic }, this.logger);
  }

  // ---------------------------------------------------------------------------------
  // Recurring schedules: through the group commit, as push subscriptions.

  putSchedule(record: ScheduleRecord): Promise<void> {
    const json = encodeSchedule(record);
    return this.write(
      1,
      () => {
        this.sql.putSchedule.run(record.id, json, record.updatedAt);
        this.schedulesChanged++;
      },
      true,
    );
  }

  async getSchedule(id: string): Promise<ScheduleRecord | null> {
    this.assertOpen();
    const json = this.sql.getSchedule.get(id);
    return json === undefined ? null : this.decodeScheduleRow(id, json);
  }

  putSchedules(records: readonly ScheduleRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    const rows = records.map((r) => [r.id, encodeSchedule(r), r.updatedAt] as const);
    return this.write(rows.length, () => {
      for (const row of rows) this.sql.putSchedule.run(...row);
      this.schedulesChanged++;
    });
  }

  putNewSchedules(records: readonly ScheduleRecord[]): Promise<(ScheduleRecord | null)[]> {
    if (records.length === 0) return Promise.resolve([]);
    const rows = records.map((r) => [r.id, encodeSchedule(r), r.updatedAt] as const);
    return this.write(rows.length, () => {
      const answers = rows.map((row): ScheduleRecord | null => {
        if (this.sql.putNewSchedule.run(...row).changes > 0) return null;
        const json = this.sql.getSchedule.get(row[0]);
        const existing = json === undefined ? null : this.decodeScheduleRow(row[0], json);
        if (existing !== null) return existing;
        // Stored but unreadable, which reads as no schedule: set again, as an upsert would.
        this.sql.putSchedule.run(...row);
        return null;
      });
      if (answers.includes(null)) this.schedulesChanged++;
      return answers;
    });
  }

  async getSchedules(ids: readonly string[]): Promise<(ScheduleRecord | null)[]> {
    this.assertOpen();
    return ids.map((id) => {
      const json = this.sql.getSchedule.get(id);
      return json === undefined ? null : this.decodeScheduleRow(id, json);
    });
  }

  async listSchedules(): Promise<ScheduleRecord[]> {
    this.assertOpen();
    return decodeSchedules(this.sql.listSchedules.all(), (id, json) => this.decodeScheduleRow(id, json)).sort(byId);
  }

  deleteSchedule(id: string): Promise<boolean> {
    return this.write(
      1,
      () => {
        const deleted = this.sql.deleteSchedule.run(id).changes > 0;
        if (deleted) this.schedulesChanged++;
        return deleted;
      },
      true,
    );
  }

  async swapSchedule(expected: ScheduleRecord, next: ScheduleRecord): Promise<boolean> {
    const [swapped] = await this.swapSchedules([{ expected, next }]);
    return swapped === true;
  }

  swapSchedules(swaps: readonly ScheduleSwap[]): Promise<boolean[]> {
    const texts = swaps.map((s) => [encodeSchedule(s.next), s.next.updatedAt, s.expected.id, encodeSchedule(s.expected)] as const);
    return this.write(
      swaps.length,
      () =>
        texts.map((args, i) => {
          const swapped = this.sql.swapSchedule.run(...args).changes > 0;
          if (swapped && swapChangesDefinition(swaps[i]!)) this.schedulesChanged++;
          return swapped;
        }),
      true,
    );
  }

  /**
   * A counter in this process: only one process (and one store) opens a database file
   * (lock.ts), so every write of a schedule passes here. Bumped inside the write's
   * transaction; a rolled-back one leaves a bump behind, which costs one needless re-read.
   */
  async schedulesVersion(): Promise<string> {
    this.assertOpen();
    return String(this.schedulesChanged);
  }

  private decodeScheduleRow(id: string, json: string): ScheduleRecord | null {
    return decodedOrWarn(decodeSchedule(id, json), 'schedule', this.description, { path: this.path, id }, this.logger);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Writes already accepted are committed, not dropped.
    this.writer.drain();
    await this.connection.close();
  }

  // ---------------------------------------------------------------------------------

  /** A failed attempt (nack, expiry), as core/task/decide.ts decides it. */
  private settleFailure(id: string, receipt: string, now: number, cause: FailureCause, counts: CountDeltas): NackOutcome {
    const row = this.sql.control.get(id);
    const facts = row && { state: row.state, attempts: row.attempts, maxAttempts: row.max_attempts, backoff: backoffOf(row), reservedUntil: row.reserved_until };
    const decision = decideFailure(facts, row?.receipt === receipt, now, cause);
    if (decision.status === 'not_found' || decision.status === 'stale') return { status: decision.status };
    // Narrows `row`: a decision to retry or bury was made on a row that exists.
    if (row === undefined) return { status: 'not_found' };
    if (decision.status === 'dead') {
      this.sql.bury.run(decision.error, now, row.seq);
      counts.move(row.topic, 'reserved', 'dead');
      return { status: 'dead' };
    }
    this.sql.retry.run(decision.runAt, decision.runAt, decision.error, now, row.seq);
    counts.move(row.topic, 'reserved', 'pending');
    return { status: 'retrying', ref: runRef(id, laneOf(row.topic, row.url), decision.runAt, row.seq) };
  }

  /** `oneStatement`: see GroupCommit.submit; true only where the single write comes last. */
  private write<T>(weight: number, apply: (counts: CountDeltas) => T, oneStatement = false): Promise<T> {
    if (this.closed) return Promise.reject(closedError(this.path));
    return this.writer.submit(Math.max(1, weight), apply, oneStatement);
  }

  private assertOpen(): void {
    if (this.closed) throw closedError(this.path);
  }
}

function closedError(path: string): DelayQError {
  return new DelayQError('QUEUE_CLOSED', `sqlite store ${path} is closed`, { path });
}
