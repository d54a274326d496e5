/**
 * The memory store's tasks role (`store.tasks`): every task in a Map, with the counters,
 * due minutes and receipts kept beside it, and the engine's run timers on the task objects
 * (`runTimers`, ADR 0019). The store (memory-store.ts) holds it with the record roles.
 */
import { cutPage, mapLazily } from '../../core/task/list-page.js';
import { applyStateDeltas, statsOfCounters } from '../../core/task/counter-deltas.js';
import { decideExtend, decideFailure, deferrableOr, failureOutcome, movableOr, nackOutcomeOf, type FailureCause } from '../../core/task/decide.js';
import { attemptEntry, withAttempt, type AttemptEntry } from '../../core/task/history.js';
import { nextState, type TaskEvent } from '../../core/task/lifecycle.js';
import { TASK_STATES, laneOf, type ReservedTask, type NewTaskRecord, type TaskRecord, type TaskState, type TimerRef } from '../../core/task/model.js';
import type { StoreAckOutcome, TopicPurgeRequest, TopicPurgeStep, AckRequest, CancelDeadOutcome, StoreCancelOutcome, DeferOutcome, DeferRequest, DueCursor, DueHistogram, DueHistogramQuery, NackOutcome, ExpireOutcome, ExtendOutcome, ExtendRequest, ListFilter, QuarantineRequest, RescheduleOutcome, RetryDeadOutcome, ScheduleOutcome, StoreStats, TaskRoles, FlowLease, RunTimerIndex, NackRequest } from '../../core/ports/index.js';
import { MAX_ERROR_LENGTH, storableText } from '../../core/text.js';
import { mayQuarantine } from '../../core/task/undecodable.js';
import { addDue, dropDue, DueMinutes } from './due-minutes.js';
import { MemoryReceipts } from './receipts.js';
import { runRef, runTimersOnTasks, taskOfRef, type StoredTask } from './stored-task.js';

export class MemoryTasks implements TaskRoles {
  readonly runTimers: RunTimerIndex = runTimersOnTasks((id) => this.byId.get(id)); // on the task objects (ADR 0019)
  private readonly byId = new Map<string, StoredTask>();
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
  private readonly dueMinutes = new DueMinutes();
  private readonly receipts = new MemoryReceipts();
  private nextSeq = 1;
  /** The open passes of purgeTopic, by cursor. */
  private readonly purgePasses = new Map<string, MapIterator<StoredTask>>();
  private purgePassCount = 0;

  /** `assertOpen`: the store's, which throws QUEUE_CLOSED once it is closed. */
  constructor(private readonly assertOpen: () => void) {}

  async schedule(tasks: readonly NewTaskRecord[], now: number): Promise<ScheduleOutcome[]> {
    this.assertOpen();
    const outcomes = tasks.map((task): ScheduleOutcome => {
      const existing = this.byId.get(task.id);
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
        trace: task.trace ?? null,
        priority: task.priority ?? 0,
        history: NO_HISTORY,
        reservation: 0,
        reservedUntil: Number.NaN,
        seq: this.nextSeq++,
        counts: this.topicCounts(task.topic),
        dueMinutes: this.dueMinutes.ofTopic(task.topic),
        runTimer: undefined,
      };
      this.byId.set(task.id, stored);
      applyStateDeltas(stored.counts, null, 'pending');
      addDue(stored.dueMinutes, stored.runAt);
      return { id: task.id, runAt: task.runAt, created: true, ref: runRef(stored) };
    });
    return outcomes;
  }

  async cancel(id: string, now: number): Promise<StoreCancelOutcome> {
    this.assertOpen();
    return this.cancelOne(id, now);
  }

  async cancelMany(ids: readonly string[], now: number): Promise<StoreCancelOutcome[]> {
    this.assertOpen();
    return ids.map((id) => this.cancelOne(id, now));
  }

  private cancelOne(id: string, now: number): StoreCancelOutcome {
    const task = movableOr(this.byId.get(id), 'cancel', 'not_pending');
    if (typeof task === 'string') return { status: task };
    this.apply(task, 'cancel', now);
    return { status: 'cancelled', topic: task.topic };
  }

  async reschedule(id: string, runAt: number, now: number): Promise<RescheduleOutcome> {
    this.assertOpen();
    const task = movableOr(this.byId.get(id), 'reschedule', 'not_pending');
    if (typeof task === 'string') return { status: task };
    this.apply(task, 'reschedule', now);
    return { status: 'rescheduled', ref: this.pendingAt(task, runAt) };
  }

  async loadDue(until: number, after: DueCursor | null, limit: number): Promise<TimerRef[]> {
    this.assertOpen();
    const refs: TimerRef[] = [];
    for (const task of this.byId.values()) {
      const ref = task.state === 'pending' ? runRef(task) : task.state === 'reserved' ? this.ttrRef(task) : null;
      if (ref === null || ref.dueAt >= until) continue;
      if (after && (ref.dueAt < after.dueAt || (ref.dueAt === after.dueAt && ref.seq <= after.seq))) continue;
      refs.push(ref);
    }
    refs.sort((a, b) => a.dueAt - b.dueAt || a.seq - b.seq);
    return refs.slice(0, limit);
  }

  /** The task a ref names: our own run refs point at it (no lookup), any other ref by id. */
  private taskFor(ref: TimerRef): StoredTask | undefined {
    return taskOfRef(ref) ?? this.byId.get(ref.id);
  }

  async reserve(ids: readonly string[], now: number, ttrMs?: number): Promise<ReservedTask[]> {
    this.assertOpen();
    const reserved: ReservedTask[] = [];
    for (const id of ids) {
      const task = this.byId.get(id);
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
      const task = this.taskFor(ref);
      if (task) this.reserveOne(task, now, ttrMs, reserved);
    }
    return reserved;
  }

  private reserveOne(task: StoredTask, now: number, ttrMs: number | undefined, reserved: ReservedTask[]): void {
    if (task.state !== 'pending' || task.runAt > now) return;
    this.apply(task, 'reserve', now);
    task.attempts++;
    task.reservation = this.receipts.next();
    this.reservedSlots[task.reservation & (RESERVED_SLOTS - 1)] = task;
    task.reservedUntil = now + (ttrMs ?? task.ttrMs);
    reserved.push({
      id: task.id,
      topic: task.topic,
      payload: task.payload,
      runAt: task.runAt,
      attempts: task.attempts,
      maxAttempts: task.maxAttempts,
      receipt: this.receipts.receiptOf(task),
      reservedUntil: task.reservedUntil,
      url: task.url,
      trace: task.trace,
    });
  }

  async defer({ id, receipt, runAt, now }: DeferRequest): Promise<DeferOutcome> {
    this.assertOpen();
    const found = this.byId.get(id);
    const task = deferrableOr(found, found !== undefined && this.receipts.holds(found, receipt));
    if (typeof task === 'string') return { status: task };
    this.apply(task, 'defer', now);
    task.reservation = 0;
    task.reservedUntil = Number.NaN;
    task.attempts--;
    // Counted by its minute like every task made pending (dueHistogram missed deferred ones).
    return { status: 'deferred', ref: this.pendingAt(task, runAt) };
  }

  async ack(id: string, receipt: string, now: number): Promise<StoreAckOutcome> {
    this.assertOpen();
    return this.ackOne(id, receipt, now);
  }

  async ackMany(acks: readonly AckRequest[], now: number): Promise<StoreAckOutcome[]> {
    this.assertOpen();
    const outcomes: StoreAckOutcome[] = new Array<StoreAckOutcome>(acks.length);
    for (let i = 0; i < acks.length; i++) outcomes[i] = this.ackOne(acks[i]!.id, acks[i]!.receipt, now);
    return outcomes;
  }

  private ackOne(id: string, receipt: string, now: number): StoreAckOutcome {
    const reservation = this.receipts.reservationIn(receipt);
    const slotted = this.reservedSlots[reservation & (RESERVED_SLOTS - 1)];
    const task = slotted !== undefined && slotted.id === id ? slotted : this.byId.get(id);
    if (!task) return NOT_FOUND;
    if (!this.receipts.holds(task, receipt, reservation)) return this.receipts.completedBy(task, receipt, reservation) ? ALREADY_ACKED : STALE;
    // updatedAt is still the reservation's time: the attempt's start.
    task.history = withAttempt(task.history, attemptEntry(task.attempts, task.updatedAt, now, 'acked', null));
    this.apply(task, 'ack', now);
    // The reservation number stays: it names the receipt that completed the task.
    task.reservedUntil = Number.NaN;
    return { status: 'acked', topic: task.topic };
  }

  async nack({ id, receipt, now, ...options }: NackRequest): Promise<NackOutcome> {
    this.assertOpen();
    return nackOutcomeOf(this.settleFailure(id, receipt, now, { kind: 'nack', ...options }));
  }

  async expire(id: string, receipt: string, now: number): Promise<ExpireOutcome> {
    this.assertOpen();
    return this.settleFailure(id, receipt, now, { kind: 'expire' });
  }

  async extend(requests: readonly ExtendRequest[], now: number): Promise<ExtendOutcome[]> {
    this.assertOpen();
    return requests.map(({ id, receipt, ttrMs }): ExtendOutcome => {
      const task = this.byId.get(id);
      const decision = decideExtend(task && { state: task.state, reservedUntil: task.reservedUntil }, task !== undefined && this.receipts.holds(task, receipt), now);
      if (decision !== 'go' || task === undefined) return decision === 'not_found' ? EXTEND_NOT_FOUND : EXTEND_STALE;
      task.reservedUntil = now + (ttrMs ?? task.ttrMs);
      return { status: 'extended', reservedUntil: task.reservedUntil };
    });
  }

  /** The reservations of a topic in force (TopicLimitStore.reservedLeases, through the store's topics role). */
  reservedLeases(topic: string, now: number, until: number): FlowLease[] {
    const leases: FlowLease[] = [];
    for (const task of this.byId.values())
      if (task.state === 'reserved' && task.topic === topic && task.reservedUntil > now && task.reservedUntil <= until) leases.push({ key: this.receipts.receiptOf(task)!, until: task.reservedUntil });
    return leases;
  }

  async get(id: string): Promise<TaskRecord | null> {
    this.assertOpen();
    const task = this.byId.get(id);
    return task ? this.publicRecord(task) : null;
  }

  async list(filter: ListFilter): Promise<TaskRecord[]> {
    this.assertOpen();
    const matches = [...this.byId.values()]
      .filter((t) => (filter.topic === undefined || t.topic === filter.topic) && (filter.state === undefined || t.state === filter.state))
      .filter((t) => filter.afterId === undefined || t.id > filter.afterId)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return cutPage(mapLazily(matches, (task) => this.publicRecord(task)), filter.limit, filter.maxSize);
  }

  async stats(): Promise<StoreStats> {
    this.assertOpen();
    return statsOfCounters([...this.counts].flatMap(([topic, counts]) => TASK_STATES.map((state) => ({ topic, state, n: counts[state] }))));
  }

  async dueHistogram(query: DueHistogramQuery): Promise<DueHistogram> {
    this.assertOpen();
    return this.dueMinutes.histogram(query);
  }

  async cancelDead(id: string, now: number): Promise<CancelDeadOutcome> {
    this.assertOpen();
    const task = movableOr(this.byId.get(id), 'cancelDead', 'not_dead');
    if (typeof task === 'string') return task;
    this.apply(task, 'cancelDead', now);
    return 'cancelled';
  }

  async quarantine(tasks: readonly QuarantineRequest[], now: number): Promise<void> {
    this.assertOpen();
    for (const { id, receipt, error } of tasks) {
      const task = this.byId.get(id);
      if (task === undefined || !mayQuarantine(task.state, receipt, receipt !== null && this.receipts.holds(task, receipt))) continue;
      this.apply(task, 'quarantine', now);
      task.reservation = 0;
      task.reservedUntil = Number.NaN;
      task.lastError = storableText(error, MAX_ERROR_LENGTH);
    }
  }

  async retryDead(id: string, runAt: number, now: number): Promise<RetryDeadOutcome> {
    this.assertOpen();
    const task = movableOr(this.byId.get(id), 'retryDead', 'not_dead');
    if (typeof task === 'string') return { status: task };
    this.apply(task, 'retryDead', now);
    task.attempts = 0;
    return { status: 'retried', ref: this.pendingAt(task, runAt) };
  }

  async purge(before: number, limit: number): Promise<number> {
    this.assertOpen();
    let deleted = 0;
    for (const task of this.byId.values()) {
      if (deleted >= limit) break;
      if ((task.state === 'completed' || task.state === 'cancelled') && task.updatedAt < before) {
        this.byId.delete(task.id);
        applyStateDeltas(task.counts, task.state, null);
        deleted++;
      }
    }
    return deleted;
  }

  async purgeTopic({ topic, state, cursor, limit }: TopicPurgeRequest): Promise<TopicPurgeStep> {
    this.assertOpen();
    // A pass is an iterator of the task map, which stays valid while tasks are deleted and
    // added; its cursor names it. An unknown cursor (an evicted pass) starts a new pass,
    // which is always correct, only slower.
    const name = cursor ?? `${++this.purgePassCount}`;
    const pass = (cursor === null ? undefined : this.purgePasses.get(cursor)) ?? this.byId.values();
    this.purgePasses.delete(name);
    const ids: string[] = [];
    const runs: TimerRef[] = [];
    for (let looked = 0; ids.length < limit && looked < PURGE_LOOKS_PER_LIMIT * limit; looked++) {
      const next = pass.next();
      if (next.done === true) return { ids, runs, next: null };
      const task = next.value;
      if (task.topic !== topic || !(task.state === state || (state === 'completed' && task.state === 'cancelled'))) continue;
      this.byId.delete(task.id);
      if (task.state === 'pending') {
        dropDue(task.dueMinutes, task.runAt);
        runs.push(runRef(task));
      }
      applyStateDeltas(task.counts, task.state, null);
      // A run ref may still point at the object (reserveRefs reads it): no longer pending, it reserves nothing.
      task.state = 'cancelled';
      ids.push(task.id);
    }
    this.purgePasses.set(name, pass);
    // Passes given up by their callers are forgotten, oldest first.
    if (this.purgePasses.size > MAX_PURGE_PASSES) this.purgePasses.delete(this.purgePasses.keys().next().value!);
    return { ids, runs, next: name };
  }

  private ttrRef(task: StoredTask): TimerRef {
    return { id: task.id, topic: laneOf(task.topic, task.url), kind: 'ttr', dueAt: task.reservedUntil, seq: task.seq, receipt: this.receipts.receiptOf(task) };
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
      receipt: this.receipts.receiptOf(task),
      reservedUntil: task.state !== 'reserved' ? null : task.reservedUntil,
      lastError: task.lastError,
      url: task.url,
      trace: task.trace,
      priority: task.priority,
      history: task.history,
    };
  }

  private settleFailure(id: string, receipt: string, now: number, cause: FailureCause): ExpireOutcome {
    const task = this.byId.get(id);
    const decision = decideFailure(task, task !== undefined && this.receipts.holds(task, receipt), now, cause);
    if (decision.status === 'not_found' || decision.status === 'stale') return { status: decision.status };
    // Narrows `task`: a decision to retry or bury was made on a task that exists.
    if (task === undefined) return { status: 'not_found' };
    if (decision.status === 'held') return { status: 'held', ref: this.ttrRef(task) };
    task.history = withAttempt(task.history, attemptEntry(task.attempts, task.updatedAt, now, failureOutcome(cause), decision.error));
    this.apply(task, decision.status === 'dead' ? 'bury' : 'retry', now);
    task.reservation = 0;
    task.reservedUntil = Number.NaN;
    task.lastError = decision.error;
    if (decision.status === 'dead') return { status: 'dead', topic: task.topic };
    return { status: 'retrying', ref: this.pendingAt(task, decision.runAt), topic: task.topic };
  }

  /** A task just made pending (again), due at `runAt`: counted by its minute, and its run ref. */
  private pendingAt(task: StoredTask, runAt: number): TimerRef {
    task.runAt = runAt;
    addDue(task.dueMinutes, runAt);
    return runRef(task);
  }

  /**
   * Moves the task by `event` of the state machine (core/task/lifecycle.ts), its counters
   * by the deltas of that move (core/task/counter-deltas.ts); a task leaving `reserved`
   * still has its reservation number here. Callers check first, so a refused transition
   * here is a bug in this store.
   */
  private apply(task: StoredTask, event: TaskEvent, now: number): void {
    const state = nextState(task.state, event);
    if (state === undefined) throw new Error(`memory store: ${event} is not a transition from ${task.state} (task ${task.id})`);
    // Leaving pending (a reschedule too: its caller adds the new runAt back).
    if (task.state === 'pending') dropDue(task.dueMinutes, task.runAt);
    if (task.state === 'reserved') {
      const slot = task.reservation & (RESERVED_SLOTS - 1);
      if (this.reservedSlots[slot] === task) this.reservedSlots[slot] = undefined;
    }
    applyStateDeltas(task.counts, task.state, state);
    task.state = state;
    task.updatedAt = now;
  }

  private topicCounts(topic: string): Record<TaskState, number> {
    let counts = this.counts.get(topic);
    if (!counts) this.counts.set(topic, (counts = { pending: 0, reserved: 0, completed: 0, dead: 0, cancelled: 0 }));
    return counts;
  }
}

const NO_HISTORY: readonly AttemptEntry[] = Object.freeze([]);

/** Slots of the reserved-task table (a power of two): a burst's reservations, in a table that stays in cache (ADR 0019). */
const RESERVED_SLOTS = 4096;

/** A purgeTopic step looks at up to this many tasks per task it may delete. */
const PURGE_LOOKS_PER_LIMIT = 4;
const MAX_PURGE_PASSES = 64;

/** The ack outcomes that carry no topic: one object each, shared, as an ack allocates nothing else. */
const NOT_FOUND: StoreAckOutcome = { status: 'not_found' };
const STALE: StoreAckOutcome = { status: 'stale' };
const ALREADY_ACKED: StoreAckOutcome = { status: 'already_acked' };
const EXTEND_NOT_FOUND: ExtendOutcome = { status: 'not_found' };
const EXTEND_STALE: ExtendOutcome = { status: 'stale' };
