/**
 * DelayQueue: the library API and the composition root of the engine. It owns the store,
 * the timer driver (wheel + one timer), the loader (keeps the wheel filled from the store),
 * the ready queue (due tasks per topic), the workers and the janitor, starts them in
 * order and stops them in reverse.
 *
 * The store is the authority on every task; the wheel and the ready queue are hints that
 * can be rebuilt from it. That is why a hint may be stale (a task cancelled after it was
 * due) and why losing every hint in a crash loses no task.
 */
import { DelayQError, isDelayQError } from '../core/errors.js';
import { isSharedDispatch, type AckOutcome, type AckRequest, type CancelOutcome, type Clock, type Logger, type SharedDispatch, type StoreStats, type TaskStore, type TimerToken } from '../core/ports.js';
import { TASK_STATES, toTaskInfo, type ReservedTask, type Delivery, type TaskInfo, type TaskState, type TimerRef } from '../core/task/model.js';
import {
  DEFAULT_LIMITS,
  DEFAULT_TASK_DEFAULTS,
  resolveRunAt,
  validateBatch,
  validateId,
  validateIntOption,
  validateScheduleInput,
  validateTopic,
  validateWhen,
  type Limits,
  type ScheduleInput,
  type TaskDefaults,
  type WhenInput,
} from '../core/task/validate.js';
import { createIdGenerator } from './ids.js';
import { LatenessRecorder, type LatenessSummary } from './lateness.js';
import { DEFAULT_LOADER_OPTIONS, Loader, type LoaderOptions } from './loader.js';
import { silentLogger } from '../core/logger.js';
import { ReadyQueue } from './ready-queue.js';
import { systemClock } from './system-clock.js';
import { TimerDriver } from './timer-driver.js';
import { Worker, type Handler, type Job, type WorkOptions, type WorkSource } from './worker.js';
import { openStore, type StoreOptions } from '../stores/open-store.js';

export interface DelayQueueOptions {
  /**
   * Where tasks live: 'memory' (the default), 'sqlite:./path/file.db', 'redis://host:port',
   * 'redis+cluster://host:port,host:port', or a TaskStore instance.
   */
  store?: string | TaskStore;
  /** Options for the store named by a `store` URL. */
  storeOptions?: StoreOptions;
  /** Injected time; tests pass a ManualClock. */
  clock?: Clock;
  /** Timing-wheel precision in ms. Default 1. */
  tickMs?: number;
  limits?: Partial<Limits>;
  /** Defaults for tasks that do not say: ttrMs 30 s, maxAttempts 5, backoff 1 s x2 up to 1 h. */
  defaults?: Partial<TaskDefaults>;
  logger?: Logger;
  /** Completed and cancelled tasks (and so their ids) are kept this long. Default 7 days. */
  retentionMs?: number;
  loader?: Partial<LoaderOptions>;
  /** Randomness for backoff jitter; tests pass a fixed one. */
  random?: () => number;
}

export interface ScheduleResult {
  readonly id: string;
  readonly runAt: number;
  /** false when a task with this id already existed (the call changed nothing). */
  readonly created: boolean;
}

export interface ReserveOptions {
  /** Most tasks to take. Default 1, at most 1,000. */
  max?: number;
  /** Wait up to this long for a task to fall due. Default 0 (answer at once), at most 60 s. */
  waitMs?: number;
  /** Reservation length; default each task's ttrMs. */
  ttrMs?: number;
  signal?: AbortSignal;
}

export interface NackOptions {
  /** Retry after this delay instead of the task's backoff. */
  delayMs?: number;
  /** Recorded as the task's lastError. */
  error?: string;
}

export type RescheduleResult =
  | { readonly status: 'rescheduled'; readonly runAt: number }
  | { readonly status: 'not_found' | 'not_pending' };

export type NackResult = { readonly state: 'pending'; readonly runAt: number } | { readonly state: 'dead' };

export interface ListOptions {
  topic?: string;
  state?: TaskState;
  limit?: number;
  afterId?: string;
}

export interface QueueStats {
  readonly store: string;
  readonly counts: StoreStats['byState'];
  readonly topics: StoreStats['byTopic'];
  /** Timers in the wheel (pending tasks within the horizon and reservations). */
  readonly timers: number;
  /** Due tasks waiting for a consumer, by topic. */
  readonly ready: Readonly<Record<string, number>>;
  /** How late deliveries were (delivered at - runAt), in ms. */
  readonly lateness: LatenessSummary;
}

/** The most tasks one reserve call may take. */
export const MAX_RESERVE = 1_000;
/** The longest a reserve call may wait. */
export const MAX_WAIT_MS = 60_000;
const PURGE_INTERVAL_MS = 60_000;

type Phase = 'open' | 'closing' | 'closed';

export class DelayQueue {
  private readonly driver: TimerDriver;
  private readonly loader: Loader;
  private readonly ready = new ReadyQueue();
  /** Set when the store is shared by several processes: due tasks go to its ready lists. */
  private shared: (TaskStore & SharedDispatch) | null = null;
  private readonly workers = new Set<Worker>();
  private readonly lateness = new LatenessRecorder();
  private readonly makeId: () => string;
  /** The limits in force (defaults merged with the options). */
  readonly limits: Limits;
  private readonly defaults: TaskDefaults;
  private readonly random: () => number;
  private readonly retentionMs: number;
  private readonly pendingOps = new Set<Promise<unknown>>();
  private readonly closeSignal = new AbortController();
  private janitor: TimerToken | null = null;
  private phase: Phase = 'open';
  private closing: Promise<void> | null = null;

  /** Opens (or creates) the store and starts the engine. */
  static async open(options: DelayQueueOptions = {}): Promise<DelayQueue> {
    const spec = options.store ?? 'memory';
    const storeOptions = options.storeOptions ?? {};
    const logger = storeOptions.logger ?? options.logger;
    const clock = storeOptions.clock ?? options.clock;
    const store =
      typeof spec === 'string'
        ? await openStore(spec, { ...storeOptions, ...(logger ? { logger } : {}), ...(clock ? { clock } : {}) })
        : spec;
    const queue = new DelayQueue(store, options);
    queue.start();
    return queue;
  }

  private constructor(
    readonly store: TaskStore,
    options: DelayQueueOptions,
    readonly clock: Clock = options.clock ?? systemClock,
    private readonly logger: Logger = options.logger ?? silentLogger,
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.defaults = { ...DEFAULT_TASK_DEFAULTS, ...options.defaults };
    this.random = options.random ?? Math.random;
    this.retentionMs = options.retentionMs ?? 7 * 24 * 3600 * 1000;
    this.makeId = createIdGenerator(() => this.clock.now());
    this.driver = new TimerDriver(this.clock, (refs) => this.onDue(refs), options.tickMs ?? 1, store.timerHome?.bind(store));
    this.loader = new Loader(store, this.clock, store.horizonMs, (ref) => this.placeLoaded(ref), this.ready, this.logger, {
      ...DEFAULT_LOADER_OPTIONS,
      ...options.loader,
    });
  }

  private start(): void {
    if (isSharedDispatch(this.store)) {
      this.shared = this.store;
      // Like loaded timers: the wheel may hold them already (a takeover reloads a whole shard).
      this.shared.onRemoteTimer((ref) => this.placeLoaded(ref));
    }
    this.driver.start();
    this.loader.start();
    this.armJanitor();
  }

  // ---------------------------------------------------------------------------------
  // Producers

  /** Schedules one task. Resolves once the store holds it (durably, for durable stores). */
  async schedule(input: ScheduleInput): Promise<ScheduleResult> {
    const [result] = await this.scheduleMany([input]);
    return result!;
  }

  /**
   * Schedules several tasks in one store write. Every task is validated first: one bad
   * task rejects the whole call (with its index in `details.index`) and nothing is stored.
   */
  async scheduleMany(inputs: readonly ScheduleInput[]): Promise<ScheduleResult[]> {
    this.assertOpen();
    validateBatch(inputs, this.limits);
    const now = this.clock.now();
    const records = inputs.map((input, index) => {
      try {
        return validateScheduleInput(input, now, this.makeId, this.limits, this.defaults);
      } catch (error) {
        if (error instanceof DelayQError && inputs.length > 1)
          throw new DelayQError(error.code, `tasks[${index}].${error.message}`, { ...error.details, index }, { cause: error });
        throw error;
      }
    });
    if (records.length === 0) return [];
    const outcomes = await this.track(this.store.schedule(records, now));
    // A ref that was not created now is a task already pending (a retried call): its timer
    // may be in the wheel already, so it goes through the check the loader's timers do.
    for (const outcome of outcomes) {
      if (outcome.ref === null) continue;
      if (outcome.created) this.place(outcome.ref, true);
      else this.placeLoaded(outcome.ref);
    }
    return outcomes.map(({ id, runAt, created }) => ({ id, runAt, created }));
  }

  /** Cancels a pending task. True if it was pending and is now cancelled. */
  async cancel(id: string): Promise<boolean> {
    return (await this.cancelTask(id)) === 'cancelled';
  }

  /**
   * Cancels several tasks in one call (up to `limits.maxBatch` ids): `result[i]` is what
   * `cancel(ids[i])` would answer. Every id is checked first, so a bad one rejects the call
   * and cancels nothing. The store takes the cancels together where it can (the Redis
   * store: one script call per shard, up to 500 ids each). If the store fails, the call
   * rejects and some of the tasks may be cancelled already; calling again answers false
   * for those.
   */
  async cancelMany(ids: readonly string[]): Promise<boolean[]> {
    this.assertOpen();
    validateBatch(ids, this.limits, 'ids');
    for (let i = 0; i < ids.length; i++) atIndex('ids', i, () => validateId(ids[i], this.limits));
    const now = this.clock.now();
    const store = this.store;
    const outcomes =
      store.cancelMany !== undefined
        ? await this.track(store.cancelMany(ids, now))
        : await Promise.all(ids.map((id) => this.track(store.cancel(id, now))));
    const cancelled = new Array<boolean>(ids.length);
    for (let i = 0; i < ids.length; i++) {
      cancelled[i] = outcomes[i] === 'cancelled';
      if (cancelled[i]) this.driver.remove(ids[i]!);
    }
    return cancelled;
  }

  /** `cancel`, saying why not: no such task, or no longer pending (already delivered...). */
  async cancelTask(id: string): Promise<CancelOutcome> {
    this.assertOpen();
    validateId(id, this.limits);
    const outcome = await this.track(this.store.cancel(id, this.clock.now()));
    if (outcome === 'cancelled') this.driver.remove(id);
    return outcome;
  }

  /**
   * Moves a pending task to a new time (the keepalive case: each keepalive pushes the
   * deadline back). True if it was pending and now runs at the new time.
   */
  async reschedule(id: string, when: WhenInput): Promise<boolean> {
    return (await this.rescheduleTask(id, when)).status === 'rescheduled';
  }

  /** `reschedule`, returning the new runAt, or why the task could not be moved. */
  async rescheduleTask(id: string, when: WhenInput): Promise<RescheduleResult> {
    this.assertOpen();
    validateId(id, this.limits);
    const now = this.clock.now();
    const runAt = validateWhen(when, now, this.limits);
    const outcome = await this.track(this.store.reschedule(id, runAt, now));
    if (outcome.status !== 'rescheduled') return { status: outcome.status };
    this.driver.remove(id);
    this.place(outcome.ref);
    return { status: 'rescheduled', runAt: outcome.ref.dueAt };
  }

  // ---------------------------------------------------------------------------------
  // Inspection

  async get<P = unknown>(id: string): Promise<TaskInfo<P> | null> {
    this.assertUsable();
    validateId(id, this.limits);
    const record = await this.store.get(id);
    return record === null ? null : toTaskInfo<P>(record);
  }

  /** Tasks by id order, optionally of one topic and state; page with `afterId`. */
  async list<P = unknown>(options: ListOptions = {}): Promise<TaskInfo<P>[]> {
    this.assertUsable();
    if (options.topic !== undefined) validateTopic(options.topic, this.limits);
    if (options.state !== undefined && !TASK_STATES.includes(options.state))
      throw new DelayQError('INVALID_ARGUMENT', `state: must be one of ${TASK_STATES.join(', ')}`, { field: 'state' });
    if (options.afterId !== undefined) validateId(options.afterId, this.limits);
    const limit = options.limit === undefined ? 100 : validateIntOption(options.limit, 'limit', 1, 10_000);
    const records = await this.store.list({ ...options, limit });
    return records.map((r) => toTaskInfo<P>(r));
  }

  async stats(): Promise<QueueStats> {
    this.assertUsable();
    const stats = await this.store.stats();
    return {
      store: this.store.description,
      counts: stats.byState,
      topics: stats.byTopic,
      timers: this.driver.size,
      ready: this.ready.backlogByTopic(),
      lateness: this.lateness.summary(),
    };
  }

  /** Brings a dead task back to pending (attempts reset), due now or at the given time. */
  async retryDead(id: string, when: WhenInput = {}): Promise<boolean> {
    this.assertOpen();
    validateId(id, this.limits);
    const now = this.clock.now();
    const runAt = resolveRunAt(when, now, this.limits);
    const outcome = await this.track(this.store.retryDead(id, runAt, now));
    if (outcome.status !== 'revived') return false;
    this.place(outcome.ref);
    return true;
  }

  // ---------------------------------------------------------------------------------
  // Consumers

  /**
   * Pull consumers: reserves up to `max` due tasks of `topic`, waiting up to `waitMs` for
   * one to fall due. Each delivery must be acked (or nacked) with its receipt within its
   * reservation, or it is delivered again.
   */
  async reserve<P = unknown>(topic: string, options: ReserveOptions = {}): Promise<Delivery<P>[]> {
    this.assertOpen();
    validateTopic(topic, this.limits);
    const max = options.max === undefined ? 1 : validateIntOption(options.max, 'max', 1, MAX_RESERVE);
    const waitMs = options.waitMs === undefined ? 0 : validateIntOption(options.waitMs, 'waitMs', 0, MAX_WAIT_MS);
    const ttrMs = options.ttrMs === undefined ? undefined : validateIntOption(options.ttrMs, 'ttrMs', 1, this.limits.maxTtrMs);
    const deadline = new AbortController();
    const timer = waitMs > 0 ? this.clock.setTimer(() => deadline.abort(), waitMs) : null;
    if (waitMs === 0) deadline.abort();
    const signal = AbortSignal.any([deadline.signal, this.closeSignal.signal, ...(options.signal ? [options.signal] : [])]);
    try {
      return (await this.reserveFor(topic, max, signal, ttrMs, true)) as Delivery<P>[];
    } finally {
      if (timer !== null) this.clock.clearTimer(timer);
    }
  }

  /** Acks a delivery: the task is done. Throws STALE_RECEIPT if the reservation is not current. */
  async ack(id: string, receipt: string): Promise<void> {
    this.assertUsable();
    validateId(id, this.limits);
    const outcome = await this.track(this.store.ack(id, requireReceipt(receipt), this.clock.now()));
    if (outcome === 'not_found') throw new DelayQError('TASK_NOT_FOUND', `task ${id} not found`, { id });
    if (outcome === 'stale') throw staleReceipt(id);
    this.driver.remove(id);
  }

  /**
   * Acks several deliveries in one call (up to `limits.maxBatch`), for consumers that
   * reserve a batch and settle it together: `result[i]` is `'acked'`, `'stale'` (the receipt
   * is not the current reservation's: STALE_RECEIPT for `ack`) or `'not_found'`. Every id
   * and receipt is checked first; the store takes them in one call where it can.
   */
  async ackMany(acks: readonly AckRequest[]): Promise<AckOutcome[]> {
    this.assertUsable();
    validateBatch(acks, this.limits, 'acks');
    for (let i = 0; i < acks.length; i++) {
      atIndex('acks', i, () => {
        const ack = acks[i] as Partial<AckRequest> | null;
        if (typeof ack !== 'object' || ack === null) throw new DelayQError('INVALID_ARGUMENT', 'must be an object {id, receipt}', {});
        validateId(ack.id, this.limits);
        requireReceipt(ack.receipt);
      });
    }
    const now = this.clock.now();
    const store = this.store;
    // Only {id, receipt} reach the store: a topic here would be the caller's word, not the task's.
    const outcomes =
      store.ackMany !== undefined
        ? await this.track(store.ackMany(acks.map(({ id, receipt }) => ({ id, receipt })), now))
        : await Promise.all(acks.map((ack) => this.track(store.ack(ack.id, ack.receipt, now))));
    for (let i = 0; i < acks.length; i++) if (outcomes[i] === 'acked') this.driver.remove(acks[i]!.id);
    return outcomes;
  }

  /**
   * Fails a delivery: the task is retried (after `delayMs`, or its backoff) or, out of
   * attempts, dead. Throws STALE_RECEIPT if the reservation is not current.
   */
  async nack(id: string, receipt: string, options: NackOptions = {}): Promise<NackResult> {
    this.assertUsable();
    validateId(id, this.limits);
    if (options.delayMs !== undefined) validateIntOption(options.delayMs, 'delayMs', 0, this.limits.maxDelayMs);
    const outcome = await this.track(
      this.store.nack(id, requireReceipt(receipt), this.clock.now(), {
        ...(options.delayMs !== undefined ? { delayMs: options.delayMs } : {}),
        ...(options.error !== undefined ? { error: String(options.error).slice(0, 2_000) } : {}),
        random: this.random(),
      }),
    );
    switch (outcome.status) {
      case 'not_found':
        throw new DelayQError('TASK_NOT_FOUND', `task ${id} not found`, { id });
      case 'stale':
        throw staleReceipt(id);
      case 'dead':
        this.driver.remove(id);
        return { state: 'dead' };
      case 'retrying':
        this.driver.remove(id);
        this.place(outcome.ref);
        return { state: 'pending', runAt: outcome.ref.dueAt };
    }
  }

  /**
   * Push consumers: runs `handler` for each due task of `topic`, with bounded concurrency.
   * A handler that resolves acks the task; one that throws fails it (retried with backoff
   * until maxAttempts, then dead).
   */
  work<P = unknown>(topic: string, handler: Handler<P>, options: WorkOptions = {}): Worker {
    this.assertOpen();
    validateTopic(topic, this.limits);
    const concurrency = options.concurrency === undefined ? 10 : validateIntOption(options.concurrency, 'concurrency', 1, 10_000);
    const ttrMs = options.ttrMs === undefined ? undefined : validateIntOption(options.ttrMs, 'ttrMs', 1, this.limits.maxTtrMs);
    const worker = new Worker(topic, handler as Handler, this.workSource, concurrency, ttrMs);
    this.workers.add(worker);
    return worker;
  }

  // ---------------------------------------------------------------------------------
  // Lifecycle

  /**
   * Graceful stop: refuses new calls, ends long-polls, lets running handlers finish and
   * settle, waits for store writes in flight, then closes the store. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  get closed(): boolean {
    return this.phase !== 'open';
  }

  private async shutdown(): Promise<void> {
    this.phase = 'closing';
    if (this.janitor !== null) this.clock.clearTimer(this.janitor);
    this.closeSignal.abort();
    // Workers stop reserving now; their running handlers are awaited below.
    const workersClosed = Promise.all([...this.workers].map((w) => w.close()));
    this.ready.releaseAll();
    this.driver.stop();
    await this.loader.stop();
    await workersClosed;
    await Promise.allSettled([...this.pendingOps]);
    this.phase = 'closed';
    await this.store.close();
  }

  // ---------------------------------------------------------------------------------
  // Internals

  private readonly workSource: WorkSource = {
    // Worker deliveries get no TTR timer up front: most handlers settle within the same
    // turn of the event loop, and the worker watches only those still running after it.
    // The worker's own signal suffices: close() closes every worker first.
    reserveFor: (topic, max, signal, ttrMs) => this.reserveFor(topic, max, signal, ttrMs, false),
    watch: (delivery) => this.watchReservation(delivery),
    defer: (callback) => {
      this.clock.setTimer(callback, 0);
    },
    ackAll: (jobs) => {
      const store = this.store;
      if (store.ackMany === undefined) return Promise.all(jobs.map((job) => this.ackJob(job)));
      // The hot path: our own deliveries need no validation, and no async frame of their own.
      return store.ackMany(jobs.map((job) => job.delivery), this.clock.now()).then(
        (outcomes) => {
          for (let i = 0; i < jobs.length; i++) this.afterWorkerAck(jobs[i]!, outcomes[i] ?? 'not_found');
        },
        (error: unknown) => this.settleFailed(jobs, error),
      );
    },
    settle: (job, outcome) => {
      if (outcome.ok) return this.ackJob(job);
      const error = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
      return this.nack(job.delivery.id, job.delivery.receipt, { error }).catch((failure: unknown) => {
        // A stale receipt means the reservation already ran out and the task moved on.
        if (isDelayQError(failure, 'STALE_RECEIPT') || isDelayQError(failure, 'TASK_NOT_FOUND'))
          this.logger.warn({ id: job.delivery.id, code: failure.code }, 'nack after the reservation ran out');
        else this.settleFailed([job], failure);
      });
    },
    reportError: (error, context) => this.logger.error({ err: error }, context),
    pause: (ms) => new Promise<void>((resolve) => this.clock.setTimer(resolve, ms)),
  };

  /**
   * Takes due ids from the ready queue and claims them in the store; waits (until `signal`
   * aborts) while there are none. Ids the store refuses (cancelled, moved, taken) are
   * dropped and the loop goes on, so a stale hint never reaches a consumer.
   */
  private async reserveFor(topic: string, max: number, signal: AbortSignal, ttrMs: number | undefined, watch: boolean): Promise<Delivery[]> {
    if (this.shared) return this.reserveShared(this.shared, topic, max, signal, ttrMs, watch);
    for (;;) {
      if (this.phase !== 'open') return [];
      const items = this.ready.take(topic, max);
      if (items.length > 0) {
        const now = this.clock.now();
        let claimed: ReservedTask[];
        try {
          const store = this.store;
          claimed = await this.track(store.reserveRefs ? store.reserveRefs(items, now, ttrMs) : store.reserve(items.map((i) => i.id), now, ttrMs));
        } catch (error) {
          // Nothing was claimed, and these tasks are still pending and due in the store: put
          // them back, or no one would deliver them before a restart reloads them.
          if (this.phase === 'open') for (const item of items) this.ready.push(topic, item);
          throw error;
        }
        if (claimed.length > 0) return claimed.map((record) => this.deliver(record, now, watch));
        continue;
      }
      if (signal.aborted) return [];
      await this.ready.waitFor(topic, signal);
    }
  }

  private deliver(record: ReservedTask, now: number, watch: boolean): Delivery {
    const reservedUntil = record.reservedUntil!;
    this.lateness.record(now - record.runAt);
    const delivery: Delivery = {
      id: record.id,
      topic: record.topic,
      payload: JSON.parse(record.payload) as unknown,
      runAt: record.runAt,
      attempt: record.attempts,
      maxAttempts: record.maxAttempts,
      receipt: record.receipt!,
      reservedUntil,
    };
    if (watch) this.watchReservation(delivery);
    return delivery;
  }

  private ackJob(job: Job): Promise<void> {
    return this.store.ack(job.delivery.id, job.delivery.receipt, this.clock.now()).then(
      (acked) => this.afterWorkerAck(job, acked),
      (error: unknown) => this.settleFailed([job], error),
    );
  }

  private afterWorkerAck(job: Job, acked: AckOutcome): void {
    if (acked !== 'acked') {
      this.logger.warn({ id: job.delivery.id, outcome: acked }, 'ack after the reservation ran out; the task was or will be delivered again');
    } else if (job.watched) {
      this.driver.remove(job.delivery.id);
    }
  }

  /** The store did not take the acks or nack: the reservations stay, so their TTRs must be armed. */
  private settleFailed(jobs: readonly Job[], error: unknown): void {
    const ids = jobs.length === 1 ? jobs[0]!.delivery.id : `${jobs.length} deliveries`;
    this.logger.error({ err: error, id: ids }, 'settling deliveries failed; they will be delivered again after their TTR');
    if (this.phase === 'closed') return;
    for (const job of jobs) {
      if (job.watched) continue;
      job.watched = true;
      this.watchReservation(job.delivery);
    }
  }

  /** Arms the reservation's TTR timer: if it is neither acked nor failed by then, it expires. */
  private watchReservation(delivery: Delivery): void {
    this.place({ id: delivery.id, topic: delivery.topic, kind: 'ttr', dueAt: delivery.reservedUntil, seq: 0, receipt: delivery.receipt });
  }

  /** Puts a timer where it belongs: the wheel if within the loaded window, the ready queue if due. */
  private place(ref: TimerRef, created = false): void {
    if (this.phase === 'closed' || ref.dueAt >= this.loader.loadTarget) return;
    const held = created ? this.driver.addNew(ref) : this.driver.add(ref);
    if (!held) this.onDue([ref]);
  }

  /** A timer read by the loader: its producer may have placed it already (see Loader). */
  private placeLoaded(ref: TimerRef): void {
    if (!this.driver.holds(ref)) this.place(ref);
  }

  private onDue(refs: TimerRef[]): void {
    if (this.shared) {
      this.promote(this.shared, refs.filter((ref) => ref.kind === 'run'));
      for (const ref of refs) if (ref.kind === 'ttr') this.expire(ref);
      return;
    }
    for (const ref of refs) {
      if (ref.kind === 'run') this.ready.push(ref.topic, ref);
      else this.expire(ref);
    }
  }

  /** Shared store: due tasks go to the store's ready lists (consumers of every process take them). */
  private promote(shared: SharedDispatch, refs: TimerRef[]): void {
    if (refs.length === 0 || this.phase !== 'open') return;
    const promotion = this.track(shared.promote(refs, this.clock.now())).catch((error: unknown) => {
      this.logger.error({ err: error, count: refs.length }, 'making due tasks ready failed; will retry');
      if (this.phase === 'open') this.clock.setTimer(() => this.promote(shared, refs), 1_000);
    });
    void promotion;
  }

  /** Shared store: waits on the store's ready lists instead of the in-process ready queue. */
  private async reserveShared(
    shared: SharedDispatch,
    topic: string,
    max: number,
    signal: AbortSignal,
    ttrMs: number | undefined,
    watch: boolean,
  ): Promise<Delivery[]> {
    if (this.phase !== 'open') return [];
    const claimed = await this.track(shared.reserveReady(topic, max, () => this.clock.now(), ttrMs, signal));
    const now = this.clock.now();
    return claimed.map((record) => this.deliver(record, now, watch));
  }

  private expire(ref: TimerRef): void {
    if (this.phase !== 'open' || ref.receipt === null) return;
    const expiry = this.track(this.store.expire(ref.id, ref.receipt, this.clock.now())).then(
      (outcome) => {
        if (outcome.status === 'retrying') this.place(outcome.ref);
        if (outcome.status === 'dead') this.logger.warn({ id: ref.id }, 'reservation expired on the last attempt; task is dead');
      },
      (error: unknown) => {
        this.logger.error({ err: error, id: ref.id }, 'expiring a reservation failed; will retry');
        if (this.phase === 'open') this.clock.setTimer(() => this.expire(ref), 1_000);
      },
    );
    void expiry;
  }

  private armJanitor(): void {
    this.janitor = this.clock.setTimer(() => {
      if (this.phase !== 'open') return;
      void this.track(this.store.purge(this.clock.now() - this.retentionMs, 10_000))
        .catch((error: unknown) => this.logger.error({ err: error }, 'purging finished tasks failed'))
        .finally(() => this.phase === 'open' && this.armJanitor());
    }, PURGE_INTERVAL_MS);
  }

  /** Keeps store calls in flight visible to close(), which waits for them. */
  private track<T>(operation: Promise<T>): Promise<T> {
    this.pendingOps.add(operation);
    void operation.then(
      () => this.pendingOps.delete(operation),
      () => this.pendingOps.delete(operation),
    );
    return operation;
  }

  private assertOpen(): void {
    if (this.phase !== 'open') throw new DelayQError('QUEUE_CLOSED', 'the queue is closing or closed');
  }

  /** Settling and reading stay allowed while closing, so running handlers can ack. */
  private assertUsable(): void {
    if (this.phase === 'closed') throw new DelayQError('QUEUE_CLOSED', 'the queue is closed');
  }
}

/** Runs `check` on item `index` of a batch argument, naming the item in any error it throws. */
function atIndex(field: string, index: number, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (error instanceof DelayQError)
      throw new DelayQError(error.code, `${field}[${index}]: ${error.message}`, { ...error.details, index }, { cause: error });
    throw error;
  }
}

function requireReceipt(receipt: unknown): string {
  if (typeof receipt !== 'string' || receipt.length === 0 || receipt.length > 200)
    throw new DelayQError('INVALID_ARGUMENT', 'receipt: must be a non-empty string', { field: 'receipt' });
  return receipt;
}

function staleReceipt(id: string): DelayQError {
  return new DelayQError('STALE_RECEIPT', `task ${id}: the receipt is not the current reservation`, { id });
}
