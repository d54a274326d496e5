/**
 * The in-memory store: every task in a Map, nothing survives the process. It is the
 * reference implementation of the store port (simple enough to read against the
 * contract) and the fastest store for tests, benchmarks and caches of short-lived work.
 */
import type { PushSubscription } from '../../core/push.js';
import type { ScheduleRecord } from '../../core/schedule/model.js';
import { byId, encodeSchedule } from '../schedule-codec.js';
import { randomBytes } from 'node:crypto';
import { DelayQError } from '../../core/errors.js';
import { decideDefer, decideFailure, decideMove, type FailureCause } from '../../core/task/decide.js';
import { makeReceipt, nextState, type TaskEvent } from '../../core/task/lifecycle.js';
import { TASK_STATES, laneOf, type ReservedTask, type NewTaskRecord, type TaskRecord, type TaskState, type TimerRef } from '../../core/task/model.js';
import { type AckOutcome, type AckRequest, type CancelDeadOutcome, type CancelOutcome, type DeferOutcome, type DueCursor, type DueHistogram, type DueHistogramQuery, type HomedRunRef, type StoreNackOptions, type NackOutcome, type ListFilter, type RescheduleOutcome, type RetryDeadOutcome, type RunTimerHandle, type ScheduleOutcome, type ScheduleSwap, type StoreStats, type TaskStore, type TimerHome, type SharedDispatch, type TimerHomes } from '../../core/ports/index.js';
import { homeOf } from '../../core/timer-home.js';
import { DUE_HISTOGRAM_GRAIN_MS } from '../../core/due-histogram.js';
import { swapChangesDefinition } from '../../core/schedule/swap.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
/**
 * A task as the store keeps it. The reservation is held as numbers, not as a receipt
 * string and a nullable time: a task lives long (in V8's old generation) while a
 * receipt is new on every delivery, and each such old-to-new pointer is work for every
 * young-generation collection; at 100,000 deliveries a second that was most of the
 * collector's pause. The receipt string is rebuilt from the numbers when asked for.
 */
interface StoredTask extends Mutable<Omit<TaskRecord, 'receipt' | 'reservedUntil'>>, TimerHome {
  seq: number;
  /** The counters of the task's topic, held here so a state change needs no map lookup. */
  counts: Record<TaskState, number>;
  /** The topic's pending tasks by minute of runAt (dueHistogram), held here like counts. */
  dueMinutes: Map<number, number>;
  /**
   * The current reservation's serial number; 0 when never reserved. Kept when the task is
   * acked (a completed task remembers the reservation that completed it, so the same ack
   * sent again answers 'acked'); cleared when an attempt fails. Only a `reserved` task
   * has a current receipt.
   */
  reservation: number;
  /** When the current reservation runs out; NaN when not reserved (always a number). */
  reservedUntil: number;
  /**
   * The engine's run timer for this task (TimerHomes): kept on the task, so scheduling and
   * firing a timer need no map by id (a delete from a map of every pending timer was the
   * largest single cost of a delivery).
   */
  runTimer: RunTimerHandle | undefined;
}

export class MemoryStore implements TaskStore, TimerHomes {
  readonly description = 'memory';
  readonly horizonMs = Number.POSITIVE_INFINITY;
  readonly shared: SharedDispatch | null = null;
  readonly timerHomes: TimerHomes | null = this;
  private readonly tasks = new Map<string, StoredTask>();
  /**
   * Reserved tasks by their reservation number, direct-mapped (slot = number mod
   * RESERVED_SLOTS), so an ack finds its task from the receipt in a table that stays in
   * the CPU cache, not in the map of every task (ADR 0019). A slot is overwritten by the
   * reservation RESERVED_SLOTS later; an ack whose slot moved on falls back to the map. Not
   * a Map of the reserved ids: its size swings between empty and full on every burst, and
   * V8 rehashes it each time it grows or shrinks.
   */
  private readonly reservedSlots = new Array<StoredTask | undefined>(RESERVED_SLOTS).fill(undefined);
  private readonly counts = new Map<string, Record<TaskState, number>>();
  /**
   * Per topic, the pending tasks by minute of runAt: what dueHistogram counts from, so its
   * cost is a lookup per minute asked per topic, not a pass over every task. Kept exact on
   * every move into and out of pending (a map add each: schedule, reserve, cancel...).
   */
  private readonly dueMinutes = new Map<string, Map<number, number>>();
  private nextSeq = 1;
  private receipts = 0;
  private readonly nonce = randomBytes(6).toString('base64url');
  private closed = false;
  private readonly pushSubscriptions = new Map<string, PushSubscription>();
  /** Each schedule with its text (schedule-codec.ts), which swapSchedule compares as the durable stores do. */
  private readonly schedules = new Map<string, { record: ScheduleRecord; text: string }>();
  /** schedulesVersion: counts the changes another reader would have to re-read. */
  private schedulesChanged = 0;

  async schedule(tasks: readonly NewTaskRecord[], now: number): Promise<ScheduleOutcome[]> {
    this.assertOpen();
    const outcomes = tasks.map((task): ScheduleOutcome => {
      const existing = this.tasks.get(task.id);
      if (existing) return { id: existing.id, runAt: existing.runAt, created: false, ref: null };
      // Explicit fields, not a spread: object spread is an order of magnitude slower here.
      const stored: StoredTask = {
        id: task.id,
        topic: task.topic,
        payload: task.payload,
        runAt: task.runAt,
        maxAttempts: task.maxAttempts,
        ttrMs: task.ttrMs,
        backoff: task.backoff,
        state: 'pending',
        attempts: 0,
        createdAt: now,
        updatedAt: now,
        lastError: null,
        url: task.url ?? null,
        reservation: 0,
        reservedUntil: Number.NaN,
        seq: this.nextSeq++,
        counts: this.topicCounts(task.topic),
        dueMinutes: this.topicDueMinutes(task.topic),
        runTimer: undefined,
      };
      this.tasks.set(task.id, stored);
      stored.counts.pending++;
      addDue(stored);
      return { id: task.id, runAt: task.runAt, created: true, ref: runRef(stored) };
    });
    return outcomes;
  }

  async cancel(id: string, now: number): Promise<CancelOutcome> {
    this.assertOpen();
    return this.cancelOne(id, now);
  }

  async cancelMany(ids: readonly string[], now: number): Promise<CancelOutcome[]> {
    this.assertOpen();
    return ids.map((id) => this.cancelOne(id, now));
  }

  private cancelOne(id: string, now: number): CancelOutcome {
    const task = this.tasks.get(id);
    const decision = decideMove(task?.state, 'cancel', 'not_pending');
    if (decision !== 'go') return decision;
    this.apply(task!, 'cancel', now);
    return 'cancelled';
  }

  async reschedule(id: string, runAt: number, now: number): Promise<RescheduleOutcome> {
    this.assertOpen();
    const task = this.tasks.get(id);
    const decision = decideMove(task?.state, 'reschedule', 'not_pending');
    if (decision !== 'go' || task === undefined) return { status: decision === 'go' ? 'not_found' : decision };
    this.apply(task, 'reschedule', now);
    task.runAt = runAt;
    addDue(task);
    return { status: 'rescheduled', ref: runRef(task) };
  }

  async loadDue(until: number, after: DueCursor | null, limit: number): Promise<TimerRef[]> {
    this.assertOpen();
    const refs: TimerRef[] = [];
    for (const task of this.tasks.values()) {
      const ref = task.state === 'pending' ? runRef(task) : task.state === 'reserved' ? this.ttrRef(task) : null;
      if (ref === null || ref.dueAt >= until) continue;
      if (after && (ref.dueAt < after.dueAt || (ref.dueAt === after.dueAt && ref.seq <= after.seq))) continue;
      refs.push(ref);
    }
    refs.sort((a, b) => a.dueAt - b.dueAt || a.seq - b.seq);
    return refs.slice(0, limit);
  }

  timerHome(id: string): TimerHome | undefined {
    return this.tasks.get(id);
  }

  async reserve(ids: readonly string[], now: number, ttrMs?: number): Promise<ReservedTask[]> {
    this.assertOpen();
    const reserved: ReservedTask[] = [];
    for (const id of ids) {
      const task = this.tasks.get(id);
      if (task) this.reserveOne(task, now, ttrMs, reserved);
    }
    return reserved;
  }

  async reserveRefs(refs: readonly TimerRef[], now: number, ttrMs?: number): Promise<ReservedTask[]> {
    this.assertOpen();
    const reserved: ReservedTask[] = [];
    for (const ref of refs) {
      // Our own run refs point at their task: no lookup in a map of every task, whose
      // cache misses were a fifth of a delivery's cost. A task purged since is completed
      // or cancelled, which reserveOne refuses, just as reserve refuses a missing id.
      const task = (homeOf(ref) as StoredTask | undefined) ?? this.tasks.get(ref.id);
      if (task) this.reserveOne(task, now, ttrMs, reserved);
    }
    return reserved;
  }

  private reserveOne(task: StoredTask, now: number, ttrMs: number | undefined, reserved: ReservedTask[]): void {
    if (task.state !== 'pending' || task.runAt > now) return;
    this.apply(task, 'reserve', now);
    task.attempts++;
    task.reservation = ++this.receipts;
    this.reservedSlots[task.reservation & (RESERVED_SLOTS - 1)] = task;
    task.reservedUntil = now + (ttrMs ?? task.ttrMs);
    reserved.push({
      id: task.id,
      topic: task.topic,
      payload: task.payload,
      runAt: task.runAt,
      attempts: task.attempts,
      maxAttempts: task.maxAttempts,
      receipt: this.receiptOf(task),
      reservedUntil: task.reservedUntil,
      url: task.url,
    });
  }

  async defer(id: string, receipt: string, runAt: number, now: number): Promise<DeferOutcome> {
    this.assertOpen();
    const task = this.tasks.get(id);
    const decision = decideDefer(task?.state, task !== undefined && this.holds(task, receipt));
    if (decision !== 'go' || task === undefined) return { status: decision === 'go' ? 'not_found' : decision };
    this.apply(task, 'defer', now);
    task.reservation = 0;
    task.reservedUntil = Number.NaN;
    task.attempts--;
    task.runAt = runAt;
    return { status: 'deferred', ref: runRef(task) };
  }

  async ack(id: string, receipt: string, now: number): Promise<AckOutcome> {
    this.assertOpen();
    return this.ackOne(id, receipt, now);
  }

  async ackMany(acks: readonly AckRequest[], now: number): Promise<AckOutcome[]> {
    this.assertOpen();
    const outcomes: AckOutcome[] = new Array<AckOutcome>(acks.length);
    for (let i = 0; i < acks.length; i++) outcomes[i] = this.ackOne(acks[i]!.id, acks[i]!.receipt, now);
    return outcomes;
  }

  private ackOne(id: string, receipt: string, now: number): AckOutcome {
    const reservation = this.reservationIn(receipt);
    const slotted = this.reservedSlots[reservation & (RESERVED_SLOTS - 1)];
    const task = slotted !== undefined && slotted.id === id ? slotted : this.tasks.get(id);
    if (!task) return 'not_found';
    if (!this.holds(task, receipt, reservation)) return this.completedBy(task, receipt, reservation) ? 'acked' : 'stale';
    this.apply(task, 'ack', now);
    // The reservation number stays: it names the receipt that completed the task.
    task.reservedUntil = Number.NaN;
    return 'acked';
  }

  async nack(id: string, receipt: string, now: number, options: StoreNackOptions): Promise<NackOutcome> {
    this.assertOpen();
    return this.settleFailure(id, receipt, now, { kind: 'nack', ...options });
  }

  async expire(id: string, receipt: string, now: number): Promise<NackOutcome> {
    this.assertOpen();
    return this.settleFailure(id, receipt, now, { kind: 'expire' });
  }

  async get(id: string): Promise<TaskRecord | null> {
    this.assertOpen();
    const task = this.tasks.get(id);
    return task ? this.publicRecord(task) : null;
  }

  async list(filter: ListFilter): Promise<TaskRecord[]> {
    this.assertOpen();
    const matches = [...this.tasks.values()]
      .filter((t) => (filter.topic === undefined || t.topic === filter.topic) && (filter.state === undefined || t.state === filter.state))
      .filter((t) => filter.afterId === undefined || t.id > filter.afterId)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return matches.slice(0, filter.limit).map((task) => this.publicRecord(task));
  }

  async stats(): Promise<StoreStats> {
    this.assertOpen();
    const byState = zeroCounts();
    const byTopic: Record<string, Partial<Record<TaskState, number>>> = {};
    for (const [topic, counts] of this.counts) {
      const topicCounts: Partial<Record<TaskState, number>> = {};
      for (const state of TASK_STATES) {
        if (counts[state] === 0) continue;
        topicCounts[state] = counts[state];
        byState[state] += counts[state];
      }
      if (Object.keys(topicCounts).length > 0) byTopic[topic] = topicCounts;
    }
    return { byState, byTopic };
  }

  async dueHistogram(query: DueHistogramQuery): Promise<DueHistogram> {
    this.assertOpen();
    const { from, to, bucketMs, topic } = query;
    const counts = new Array<number>(Math.ceil((to - from) / bucketMs)).fill(0);
    const maps = topic === undefined ? [...this.dueMinutes.values()] : [this.dueMinutes.get(topic)].filter((m) => m !== undefined);
    const first = Math.floor(from / DUE_HISTOGRAM_GRAIN_MS);
    const end = Math.ceil(to / DUE_HISTOGRAM_GRAIN_MS);
    for (const minutes of maps) {
      // Whichever is smaller: the minutes asked, or the minutes the topic has tasks in.
      if (end - first <= minutes.size) {
        for (let minute = first; minute < end; minute++) {
          const n = minutes.get(minute);
          if (n !== undefined) counts[Math.floor((minute * DUE_HISTOGRAM_GRAIN_MS - from) / bucketMs)]! += n;
        }
      } else {
        for (const [minute, n] of minutes)
          if (minute >= first && minute < end) counts[Math.floor((minute * DUE_HISTOGRAM_GRAIN_MS - from) / bucketMs)]! += n;
      }
    }
    return { counts, coveredUntil: to };
  }

  async cancelDead(id: string, now: number): Promise<CancelDeadOutcome> {
    this.assertOpen();
    const task = this.tasks.get(id);
    const decision = decideMove(task?.state, 'cancelDead', 'not_dead');
    if (decision !== 'go') return decision;
    this.apply(task!, 'cancelDead', now);
    return 'cancelled';
  }

  async retryDead(id: string, runAt: number, now: number): Promise<RetryDeadOutcome> {
    this.assertOpen();
    const task = this.tasks.get(id);
    const decision = decideMove(task?.state, 'retryDead', 'not_dead');
    if (decision !== 'go' || task === undefined) return { status: decision === 'go' ? 'not_found' : decision };
    this.apply(task, 'retryDead', now);
    task.attempts = 0;
    task.runAt = runAt;
    addDue(task);
    return { status: 'retried', ref: runRef(task) };
  }

  async purge(before: number, limit: number): Promise<number> {
    this.assertOpen();
    let deleted = 0;
    for (const task of this.tasks.values()) {
      if (deleted >= limit) break;
      if ((task.state === 'completed' || task.state === 'cancelled') && task.updatedAt < before) {
        this.tasks.delete(task.id);
        task.counts[task.state]--;
        deleted++;
      }
    }
    return deleted;
  }

  // ---------------------------------------------------------------------------------
  // Push subscriptions

  async putPushSubscription(subscription: PushSubscription): Promise<void> {
    this.assertOpen();
    this.pushSubscriptions.set(subscription.topic, subscription);
  }

  async getPushSubscription(topic: string): Promise<PushSubscription | null> {
    this.assertOpen();
    return this.pushSubscriptions.get(topic) ?? null;
  }

  async listPushSubscriptions(): Promise<PushSubscription[]> {
    this.assertOpen();
    return [...this.pushSubscriptions.values()].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
  }

  async deletePushSubscription(topic: string): Promise<boolean> {
    this.assertOpen();
    return this.pushSubscriptions.delete(topic);
  }

  // ---------------------------------------------------------------------------------
  // Recurring schedules

  async putSchedule(record: ScheduleRecord): Promise<void> {
    this.assertOpen();
    this.schedules.set(record.id, { record: { ...record }, text: encodeSchedule(record) });
    this.schedulesChanged++;
  }

  async getSchedule(id: string): Promise<ScheduleRecord | null> {
    this.assertOpen();
    const entry = this.schedules.get(id);
    return entry === undefined ? null : { ...entry.record };
  }

  async putSchedules(records: readonly ScheduleRecord[]): Promise<void> {
    this.assertOpen();
    for (const record of records) this.schedules.set(record.id, { record: { ...record }, text: encodeSchedule(record) });
    if (records.length > 0) this.schedulesChanged++;
  }

  async putNewSchedules(records: readonly ScheduleRecord[]): Promise<(ScheduleRecord | null)[]> {
    this.assertOpen();
    const answers = records.map((record) => {
      const entry = this.schedules.get(record.id);
      if (entry !== undefined) return { ...entry.record };
      this.schedules.set(record.id, { record: { ...record }, text: encodeSchedule(record) });
      return null;
    });
    if (answers.includes(null)) this.schedulesChanged++;
    return answers;
  }

  async getSchedules(ids: readonly string[]): Promise<(ScheduleRecord | null)[]> {
    this.assertOpen();
    return ids.map((id) => {
      const entry = this.schedules.get(id);
      return entry === undefined ? null : { ...entry.record };
    });
  }

  async listSchedules(): Promise<ScheduleRecord[]> {
    this.assertOpen();
    return [...this.schedules.values()].map((e) => ({ ...e.record })).sort(byId);
  }

  async deleteSchedule(id: string): Promise<boolean> {
    this.assertOpen();
    const deleted = this.schedules.delete(id);
    if (deleted) this.schedulesChanged++;
    return deleted;
  }

  async swapSchedule(expected: ScheduleRecord, next: ScheduleRecord): Promise<boolean> {
    this.assertOpen();
    return this.swapOne({ expected, next });
  }

  async swapSchedules(swaps: readonly { expected: ScheduleRecord; next: ScheduleRecord }[]): Promise<boolean[]> {
    this.assertOpen();
    return swaps.map((s) => this.swapOne(s));
  }

  async schedulesVersion(): Promise<string> {
    this.assertOpen();
    return String(this.schedulesChanged);
  }

  private swapOne(swap: ScheduleSwap): boolean {
    const { expected, next } = swap;
    const entry = this.schedules.get(expected.id);
    if (entry === undefined || entry.text !== encodeSchedule(expected)) return false;
    this.schedules.set(next.id, { record: { ...next }, text: encodeSchedule(next) });
    if (swapChangesDefinition(swap)) this.schedulesChanged++;
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /**
   * True when `receipt` names the task's current reservation. A receipt is
   * `<attempts>.<nonce><reservation in base 36>` (see receiptOf); it is read in place, so an
   * ack allocates nothing. Only the canonical spelling matches (no leading zeros).
   */
  private holds(task: StoredTask, receipt: string, reservation = this.reservationIn(receipt)): boolean {
    if (task.state !== 'reserved' || reservation !== task.reservation) return false;
    return parseCanonical(receipt, 0, receipt.indexOf('.'), 10) === task.attempts;
  }

  /** True when `receipt` is the one whose ack completed the task (an ack sent again). */
  private completedBy(task: StoredTask, receipt: string, reservation: number): boolean {
    if (task.state !== 'completed' || task.reservation === 0 || reservation !== task.reservation) return false;
    return parseCanonical(receipt, 0, receipt.indexOf('.'), 10) === task.attempts;
  }

  /** The reservation number a receipt of this store names, or NaN (not ours, or malformed). */
  private reservationIn(receipt: string): number {
    const dot = receipt.indexOf('.');
    if (dot <= 0 || !receipt.startsWith(this.nonce, dot + 1)) return Number.NaN;
    return parseCanonical(receipt, dot + 1 + this.nonce.length, receipt.length, 36);
  }

  private receiptOf(task: StoredTask): string | null {
    return task.state !== 'reserved' ? null : makeReceipt(task.attempts, this.nonce + task.reservation.toString(36));
  }

  private ttrRef(task: StoredTask): TimerRef {
    return { id: task.id, topic: laneOf(task.topic, task.url), kind: 'ttr', dueAt: task.reservedUntil, seq: task.seq, receipt: this.receiptOf(task) };
  }

  private publicRecord(task: StoredTask): TaskRecord {
    return {
      id: task.id,
      topic: task.topic,
      payload: task.payload,
      runAt: task.runAt,
      state: task.state,
      attempts: task.attempts,
      maxAttempts: task.maxAttempts,
      ttrMs: task.ttrMs,
      backoff: task.backoff,
      createdAt: task.createdAt,
      updatedAt: task.updatedAt,
      receipt: this.receiptOf(task),
      reservedUntil: task.state !== 'reserved' ? null : task.reservedUntil,
      lastError: task.lastError,
      url: task.url,
    };
  }

  private settleFailure(id: string, receipt: string, now: number, cause: FailureCause): NackOutcome {
    const task = this.tasks.get(id);
    const decision = decideFailure(task, task !== undefined && this.holds(task, receipt), now, cause);
    if (decision.status === 'not_found' || decision.status === 'stale') return { status: decision.status };
    // Narrows `task`: a decision to retry or bury was made on a task that exists.
    if (task === undefined) return { status: 'not_found' };
    this.apply(task, decision.status === 'dead' ? 'bury' : 'retry', now);
    task.reservation = 0;
    task.reservedUntil = Number.NaN;
    task.lastError = decision.error;
    if (decision.status === 'dead') return { status: 'dead' };
    task.runAt = decision.runAt;
    addDue(task);
    return { status: 'retrying', ref: runRef(task) };
  }

  /**
   * Moves the task by `event` of the state machine (core/task/lifecycle.ts), with its
   * counts; a task leaving `reserved` still has its reservation number here. Callers check
   * first, so a refused transition here is a bug in this store.
   */
  private apply(task: StoredTask, event: TaskEvent, now: number): void {
    const state = nextState(task.state, event);
    if (state === undefined) throw new Error(`memory store: ${event} is not a transition from ${task.state} (task ${task.id})`);
    // Leaving pending (a reschedule too: its caller adds the new runAt back).
    if (task.state === 'pending') dropDue(task);
    if (task.state === 'reserved') {
      const slot = task.reservation & (RESERVED_SLOTS - 1);
      if (this.reservedSlots[slot] === task) this.reservedSlots[slot] = undefined;
    }
    task.counts[task.state]--;
    task.counts[state]++;
    task.state = state;
    task.updatedAt = now;
  }

  private topicDueMinutes(topic: string): Map<number, number> {
    let minutes = this.dueMinutes.get(topic);
    if (!minutes) this.dueMinutes.set(topic, (minutes = new Map<number, number>()));
    return minutes;
  }

  private topicCounts(topic: string): Record<TaskState, number> {
    let counts = this.counts.get(topic);
    if (!counts) this.counts.set(topic, (counts = zeroCounts()));
    return counts;
  }

  private assertOpen(): void {
    if (this.closed) throw new DelayQError('QUEUE_CLOSED', 'the memory store is closed');
  }
}

/** Slots of the reserved-task table (a power of two): a burst's reservations, in a table that stays in cache (ADR 0019). */
const RESERVED_SLOTS = 4096;

function zeroCounts(): Record<TaskState, number> {
  return { pending: 0, reserved: 0, completed: 0, dead: 0, cancelled: 0 };
}

/** The number spelled by text[from, to) in `radix` (digits, then a-z), or NaN. */
function parseCanonical(text: string, from: number, to: number, radix: 10 | 36): number {
  if (from >= to || (text.charCodeAt(from) === 48 && to - from > 1)) return Number.NaN;
  let value = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    const digit = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 122 ? c - 87 : 99;
    if (digit >= radix) return Number.NaN;
    value = value * radix + digit;
  }
  return value;
}

/** A run ref of this store: its home is the task itself, which reserveRefs also reads. */
function runRef(task: StoredTask): HomedRunRef {
  return { id: task.id, topic: laneOf(task.topic, task.url), kind: 'run', dueAt: task.runAt, seq: task.seq, receipt: null, home: task };
}


function addDue(task: StoredTask): void {
  const minute = Math.floor(task.runAt / DUE_HISTOGRAM_GRAIN_MS);
  task.dueMinutes.set(minute, (task.dueMinutes.get(minute) ?? 0) + 1);
}

function dropDue(task: StoredTask): void {
  const minute = Math.floor(task.runAt / DUE_HISTOGRAM_GRAIN_MS);
  const n = task.dueMinutes.get(minute) ?? 0;
  if (n <= 1) task.dueMinutes.delete(minute);
  else task.dueMinutes.set(minute, n - 1);
}
