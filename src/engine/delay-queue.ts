/**
 * DelayQueue: the library API over one store. It checks every call (core/task/validate.ts),
 * makes the store change, and tells the Scheduler (scheduler.ts), which owns the engine's
 * loops, what that did to the task's timer. Its workers see it through QueueWorkSource.
 *
 * The engine knows its store by the ports alone (core/ports/): opening a store by URL is
 * the job of the composition root outside it (src/open-queue.ts, whose DelayQueue extends
 * this one with `open`). Here a queue starts over a store already open: `DelayQueue.start`.
 *
 * The store is the authority on every task; the wheel and the ready queue are hints that
 * can be rebuilt from it. That is why a hint may be stale (a task cancelled after it was
 * due) and why losing every hint in a crash loses no task.
 */
import { DelayQError } from '../core/errors.js';
import { silentLogger } from '../core/logger.js';
import { resolveEngineTuning, resolveLimits, resolveTaskDefaults } from '../core/options.js';
import { NO_OBSERVER, type QueueObserver } from '../core/observer.js';
import type { AckOutcome, AckRequest, CancelOutcome, Clock, Logger, TaskStore } from '../core/ports/index.js';
import type { PushInput } from '../core/push-input.js';
import { isValidSecret } from '../core/push-input.js';
import type { PushPorts, PushSubscription } from '../core/push.js';
import { toTaskInfo, type Delivery, type NewTaskRecord, type TaskInfo } from '../core/task/model.js';
import { resolveRunAt, validateDueHistogramOptions, validateAckBatch, validateId, validateIdBatch, validateListFilter, validateNackOptions } from '../core/task/validate.js';
import { validateReceipt, validateReserveOptions, validateScheduleBatch, validateTopic, validateWhen, validateWorkOptions } from '../core/task/validate.js';
import type { Limits, ScheduleInput, TaskDefaults, WhenInput } from '../core/task/validate.js';
import { createIdGenerator } from './ids.js';
import { InFlight } from './in-flight.js';
import { PushSubscriptions, type SetPushResult } from './push-subscriptions.js';
import type { DueHistogramOptions, DueHistogramResult, EngineOptions, ListOptions, NackOptions, NackResult, OutcomeOption, QueueStats, RescheduleResult, ReserveOptions, ScheduleResult } from './queue-types.js';
import { Scheduler } from './scheduler.js';
import { Schedules } from './schedules.js';
import { systemClock } from './system-clock.js';
import { QueueWorkSource } from './work-source.js';
import { Worker, type Handler, type WorkOptions } from './worker.js';

type Phase = 'open' | 'closing' | 'closed';
const OUTCOME: OutcomeOption = { outcome: true };

export class DelayQueue {
  /** The limits in force (defaults merged with the options). */
  readonly limits: Limits;
  readonly clock: Clock;
  private readonly logger: Logger;
  private readonly defaults: TaskDefaults;
  private readonly random: () => number;
  private readonly makeId: () => string;
  private readonly inFlight = new InFlight();
  private readonly scheduler: Scheduler;
  private readonly workSource: QueueWorkSource;
  private readonly pushSubscriptions: PushSubscriptions;
  private readonly push: PushPorts | null;
  private readonly pushSecret: string | null;
  /**
   * Recurring schedules (docs/cron.md): `upsert`, `get`, `list`, `remove`, `pause`,
   * `resume` and `next` (a preview). Each occurrence is an ordinary task with the id
   * `<schedule id>:<occurrence ms>`, created once however many processes share the store.
   */
  readonly schedules: Schedules;
  private readonly observer: QueueObserver;
  private readonly workers = new Set<Worker>();
  private readonly closeSignal = new AbortController();
  private phase: Phase = 'open';
  private closing: Promise<void> | null = null;

  /** Starts the engine over an open store, which close() will close. Options are checked first. */
  static start(store: TaskStore, options: EngineOptions = {}): DelayQueue {
    return new DelayQueue(store, options).startLoops();
  }

  /** Builds every part complete; nothing runs until startLoops(). */
  protected constructor(
    readonly store: TaskStore,
    options: EngineOptions,
  ) {
    const tuning = resolveEngineTuning(options);
    this.limits = resolveLimits(options.limits);
    this.defaults = resolveTaskDefaults(options.defaults, this.limits);
    this.random = options.random ?? Math.random;
    const clock = (this.clock = options.clock ?? systemClock);
    this.logger = options.logger ?? silentLogger;
    this.makeId = createIdGenerator(() => clock.now());
    const observer = (this.observer = options.observer ?? NO_OBSERVER);
    const nack = (d: Delivery, error: string, delayMs?: number): Promise<NackResult> =>
      this.nackTopic(d.id, d.receipt, delayMs === undefined ? { error } : { error, delayMs }, d.topic);
    const push = options.push;
    if (options.pushSecret !== undefined && !isValidSecret(options.pushSecret))
      throw new DelayQError('INVALID_SECRET', 'pushSecret: must be whsec_ followed by the base64 of 24 to 64 bytes', { field: 'pushSecret' });
    this.pushSecret = options.pushSecret ?? null;
    this.push = push ?? null;
    this.scheduler = new Scheduler(store, clock, this.logger, tuning, this.inFlight, push ? { ports: push, nack, defer: (d, runAt) => this.deferDelivery(d, runAt), defaultSecret: this.pushSecret } : undefined, observer);
    this.pushSubscriptions = new PushSubscriptions(store, push ?? null, clock, this.inFlight, () => this.scheduler.syncPush());
    this.workSource = new QueueWorkSource(store, clock, this.logger, this.scheduler, nack, tuning.storeRetryMs);
    this.schedules = new Schedules(store, this.scheduler.schedules, clock, this.inFlight, this.limits, this.defaults, () => this.assertOpen(), (ids) => this.cancelMany(ids), (topic, url) => this.checkPushTargets([{ topic, url }]));
  }

  protected startLoops(): this {
    this.scheduler.start();
    return this;
  }

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
    const now = this.clock.now();
    const records = validateScheduleBatch(inputs, now, this.makeId, this.limits, this.defaults);
    if (records.length === 0) return [];
    if (records.some((r) => r.url !== undefined)) await this.checkPushTargets(records);
    const outcomes = await this.inFlight.track(this.store.schedule(records, now));
    // A ref that was not created now is a task already pending (a retried call): its timer
    // may be in the wheel already, so it goes through the check the loader's timers do.
    for (let i = 0; i < outcomes.length; i++) {
      const outcome = outcomes[i]!;
      if (outcome.created) this.observer.scheduled(records[i]!.topic, 1);
      if (outcome.ref === null) continue;
      if (outcome.created) this.scheduler.place(outcome.ref, true);
      else this.scheduler.placeLoaded(outcome.ref);
    }
    return outcomes.map(({ id, runAt, created }) => ({ id, runAt, created }));
  }

  /**
   * The checks of tasks with their own push url, before any is stored: push configured, the
   * url allowed by the SSRF rules (INVALID_URL), and a secret to sign with, the topic's
   * subscription or the queue's default (PUSH_NO_SECRET). With several tasks, the first
   * refused one's index is in `details.index`.
   */
  private async checkPushTargets(records: readonly Pick<NewTaskRecord, 'topic' | 'url'>[]): Promise<void> {
    const push = this.push;
    const checkedUrls = new Map<string, Promise<void>>();
    const subscribed = new Map<string, Promise<boolean>>();
    for (let index = 0; index < records.length; index++) {
      const { url, topic } = records[index]!;
      if (url === undefined) continue;
      try {
        if (push === null) throw new DelayQError('INVALID_OPTION', 'url: this queue has no push transport configured', { field: 'url' });
        let checked = checkedUrls.get(url);
        if (checked === undefined) checkedUrls.set(url, (checked = push.transport.checkUrl(url)));
        await checked;
        if (this.pushSecret !== null) continue;
        let has = subscribed.get(topic);
        if (has === undefined) subscribed.set(topic, (has = this.inFlight.track(this.store.getPushSubscription(topic)).then((s) => s !== null)));
        if (!(await has))
          throw new DelayQError(
            'PUSH_NO_SECRET',
            `url: no secret to sign the push with: topic ${JSON.stringify(topic)} has no push subscription and the queue has no default push secret (pushSecret, --push-secret, DELAYQ_PUSH_SECRET)`,
            { field: 'url' },
          );
      } catch (error) {
        if (records.length > 1 && error instanceof DelayQError && error.details?.['index'] === undefined)
          throw new DelayQError(error.code, `tasks[${index}].${error.message}`, { ...error.details, index });
        throw error;
      }
    }
  }

  /**
   * Cancels a pending task: true if it was pending and is now cancelled. With
   * `{ outcome: true }` it says why not: `not_found`, or `not_pending` (delivered already...).
   */
  cancel(id: string): Promise<boolean>;
  cancel(id: string, options: OutcomeOption): Promise<CancelOutcome>;
  async cancel(id: string, options?: OutcomeOption): Promise<boolean | CancelOutcome> {
    this.assertOpen();
    validateId(id, this.limits);
    const outcome = await this.inFlight.track(this.store.cancel(id, this.clock.now()));
    if (outcome === 'cancelled') this.observer.settled(this.scheduler.remove(id), 'cancelled');
    return options?.outcome ? outcome : outcome === 'cancelled';
  }

  /**
   * Cancels several tasks in one store call (up to `limits.maxBatch` ids): `result[i]` is
   * what `cancel(ids[i])` would answer. Every id is checked first, so a bad one rejects the
   * call and cancels nothing. If the store fails, the call rejects and some of the tasks
   * may be cancelled already; calling again answers false for those.
   */
  async cancelMany(ids: readonly string[]): Promise<boolean[]> {
    this.assertOpen();
    validateIdBatch(ids, this.limits);
    const outcomes = await this.inFlight.track(this.store.cancelMany(ids, this.clock.now()));
    for (let i = 0; i < ids.length; i++) if (outcomes[i] === 'cancelled') this.observer.settled(this.scheduler.remove(ids[i]!), 'cancelled');
    return ids.map((_, i) => outcomes[i] === 'cancelled');
  }

  /**
   * Moves a pending task to a new time (the keepalive case: each keepalive pushes the
   * deadline back): true if it was pending and now runs at the new time. With
   * `{ outcome: true }` it answers the new runAt, or why the task could not be moved.
   */
  reschedule(id: string, when: WhenInput): Promise<boolean>;
  reschedule(id: string, when: WhenInput, options: OutcomeOption): Promise<RescheduleResult>;
  async reschedule(id: string, when: WhenInput, options?: OutcomeOption): Promise<boolean | RescheduleResult> {
    this.assertOpen();
    validateId(id, this.limits);
    const now = this.clock.now();
    const runAt = validateWhen(when, now, this.limits);
    const outcome = await this.inFlight.track(this.store.reschedule(id, runAt, now));
    if (outcome.status === 'rescheduled') {
      this.scheduler.remove(id);
      this.scheduler.place(outcome.ref);
    }
    if (!options?.outcome) return outcome.status === 'rescheduled';
    return outcome.status === 'rescheduled' ? { status: 'rescheduled', runAt: outcome.ref.dueAt } : { status: outcome.status };
  }

  /** @deprecated Use `cancel(id, { outcome: true })`. */
  cancelTask(id: string): Promise<CancelOutcome> {
    return this.cancel(id, OUTCOME);
  }

  /** @deprecated Use `reschedule(id, when, { outcome: true })`. */
  rescheduleTask(id: string, when: WhenInput): Promise<RescheduleResult> {
    return this.reschedule(id, when, OUTCOME);
  }

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
    const records = await this.store.list(validateListFilter(options, this.limits));
    return records.map((r) => toTaskInfo<P>(r));
  }

  async stats(): Promise<QueueStats> {
    this.assertUsable();
    const stats = await this.store.stats();
    const { scheduler } = this;
    const push = scheduler.pushStats();
    return {
      store: this.store.description,
      counts: stats.byState,
      topics: stats.byTopic,
      timers: scheduler.timers,
      ready: scheduler.backlogByTopic(),
      oldestReady: scheduler.oldestReadyByTopic(),
      waiting: scheduler.waiting,
      lateness: scheduler.latenessSummary(),
      ...(push !== null ? { push } : {}),
    };
  }

  /**
   * How many pending tasks fall due per bucket (of one topic, or all) between `from` and
   * `to`: the timeline. The store answers from its index, in buckets of whole minutes;
   * `coveredUntil` says how far its index reaches (SQLite and Redis park far-future tasks).
   */
  async dueHistogram(options: DueHistogramOptions = {}): Promise<DueHistogramResult> {
    this.assertUsable();
    const query = validateDueHistogramOptions(options, this.clock.now(), this.limits);
    const { counts, coveredUntil } = await this.store.dueHistogram(query);
    return { from: query.from, to: query.to, bucketMs: query.bucketMs, topic: query.topic ?? null, counts, coveredUntil };
  }

  /**
   * Gives up on a dead task: dead -> cancelled, purged after `retentionMs` like any finished
   * task. True if it was dead.
   */
  async cancelDead(id: string): Promise<boolean> {
    this.assertOpen();
    validateId(id, this.limits);
    return (await this.inFlight.track(this.store.cancelDead(id, this.clock.now()))) === 'cancelled';
  }

  /** Brings a dead task back to pending (attempts reset), due now or at the given time. */
  async retryDead(id: string, when: WhenInput = {}): Promise<boolean> {
    this.assertOpen();
    validateId(id, this.limits);
    const now = this.clock.now();
    const outcome = await this.inFlight.track(this.store.retryDead(id, resolveRunAt(when, now, this.limits), now));
    if (outcome.status === 'retried') this.scheduler.place(outcome.ref);
    return outcome.status === 'retried';
  }

  // Consumers

  /**
   * Pull consumers: reserves up to `max` due tasks of `topic`, waiting up to `waitMs` for
   * one to fall due. Each delivery must be acked (or nacked) with its receipt within its
   * reservation, or it is delivered again. While the topic has a push subscription
   * (setPush) this answers [] (after waiting out `waitMs`).
   */
  async reserve<P = unknown>(topic: string, options: ReserveOptions = {}): Promise<Delivery<P>[]> {
    this.assertOpen();
    validateTopic(topic, this.limits);
    const { max, waitMs, ttrMs } = validateReserveOptions(options, this.limits);
    const deadline = new AbortController();
    const timer = waitMs > 0 ? this.clock.setTimer(() => deadline.abort(), waitMs) : null;
    if (waitMs === 0) deadline.abort();
    const signal = AbortSignal.any([deadline.signal, this.closeSignal.signal, ...(options.signal ? [options.signal] : [])]);
    if (timer !== null) this.scheduler.waiting++;
    try {
      return (await this.scheduler.reserve(topic, max, signal, ttrMs, true)) as Delivery<P>[];
    } finally {
      if (timer !== null) {
        this.scheduler.waiting--;
        this.clock.clearTimer(timer);
      }
    }
  }

  /** Acks a delivery: the task is done. Throws STALE_RECEIPT if the reservation is not current. */
  async ack(id: string, receipt: string): Promise<void> {
    this.assertUsable();
    validateId(id, this.limits);
    const outcome = await this.inFlight.track(this.store.ack(id, validateReceipt(receipt), this.clock.now()));
    if (outcome === 'not_found') throw new DelayQError('TASK_NOT_FOUND', `task ${id} not found`, { id });
    if (outcome === 'stale') throw staleReceipt(id);
    this.observer.settled(this.scheduler.remove(id), 'acked');
  }

  /**
   * Acks several deliveries in one store call (up to `limits.maxBatch`), for consumers that
   * reserve a batch and settle it together: `result[i]` is `'acked'`, `'stale'` (the receipt
   * is not the current reservation's: STALE_RECEIPT for `ack`) or `'not_found'`. Every id
   * and receipt is checked first.
   */
  async ackMany(acks: readonly AckRequest[]): Promise<AckOutcome[]> {
    this.assertUsable();
    const requests = validateAckBatch(acks, this.limits);
    const outcomes = await this.inFlight.track(this.store.ackMany(requests, this.clock.now()));
    for (let i = 0; i < requests.length; i++) {
      if (outcomes[i] !== 'acked') continue;
      const removed = this.scheduler.remove(requests[i]!.id);
      this.observer.settled(requests[i]!.topic ?? removed, 'acked');
    }
    return outcomes;
  }

  /**
   * Fails a delivery: the task is retried (after `delayMs`, or its backoff) or, out of
   * attempts, dead. Throws STALE_RECEIPT if the reservation is not current.
   */
  nack(id: string, receipt: string, options: NackOptions = {}): Promise<NackResult> {
    return this.nackTopic(id, receipt, options, undefined);
  }

  /** `nack`, given the task's topic when the caller holds its delivery (for the observer). */
  private async nackTopic(id: string, receipt: string, options: NackOptions, topic: string | undefined): Promise<NackResult> {
    this.assertUsable();
    validateId(id, this.limits);
    const nackOptions = validateNackOptions(options, this.random(), this.limits);
    const outcome = await this.inFlight.track(this.store.nack(id, validateReceipt(receipt), this.clock.now(), nackOptions));
    switch (outcome.status) {
      case 'not_found':
        throw new DelayQError('TASK_NOT_FOUND', `task ${id} not found`, { id });
      case 'stale':
        throw staleReceipt(id);
      case 'dead':
        this.observer.settled(topic ?? this.scheduler.remove(id), 'dead');
        this.scheduler.remove(id);
        return { state: 'dead' };
      case 'retrying':
        this.observer.settled(topic ?? this.scheduler.remove(id), 'failed');
        this.scheduler.remove(id);
        this.scheduler.place(outcome.ref);
        return { state: 'pending', runAt: outcome.ref.dueAt };
    }
  }

  /**
   * Gives a delivery's reservation back uncounted, due again at `runAt` (the Pusher's
   * circuit breaker). A reservation that moved on meanwhile is left alone.
   */
  private async deferDelivery(delivery: Delivery, runAt: number): Promise<void> {
    const outcome = await this.inFlight.track(this.store.defer(delivery.id, delivery.receipt, runAt, this.clock.now()));
    if (outcome.status !== 'deferred') {
      this.logger.warn({ id: delivery.id, outcome: outcome.status }, 'push: deferring after the reservation ran out');
      return;
    }
    this.scheduler.remove(delivery.id);
    this.scheduler.place(outcome.ref);
  }

  /**
   * In-process consumers: runs `handler` for each due task of `topic`, with bounded
   * concurrency. A handler that resolves acks the task; one that throws nacks it (retried
   * with backoff until maxAttempts, then dead). While the topic has a push subscription
   * (setPush) the handler gets nothing; it resumes when the subscription is deleted.
   */
  work<P = unknown>(topic: string, handler: Handler<P>, options: WorkOptions = {}): Worker {
    this.assertOpen();
    validateTopic(topic, this.limits);
    const { concurrency, ttrMs } = validateWorkOptions(options, this.limits);
    const worker = new Worker(topic, handler as Handler, this.workSource, concurrency, ttrMs);
    this.workers.add(worker);
    return worker;
  }

  // Push delivery (docs/push.md)

  /**
   * Creates or replaces `topic`'s push subscription: from now on each due task of the topic
   * is POSTed to `input.url` (signed, retried like any failed delivery), and pull consumers
   * of the topic get nothing. The URL must pass the transport's SSRF rules (INVALID_URL).
   * A new secret rotates: the previous one keeps signing for SECRET_ROTATION_GRACE_MS.
   * No secret keeps the current one, or generates one for a new subscription. The answer
   * shows the secret only when it was given or generated.
   */
  async setPush(topic: string, input: PushInput): Promise<SetPushResult> {
    this.assertOpen();
    validateTopic(topic, this.limits);
    return this.pushSubscriptions.set(topic, input);
  }

  /** The topic's push subscription (secrets masked), or null. */
  async getPush(topic: string): Promise<PushSubscription | null> {
    this.assertUsable();
    validateTopic(topic, this.limits);
    return this.pushSubscriptions.get(topic);
  }

  /** Every push subscription by topic (secrets masked). */
  async listPush(): Promise<PushSubscription[]> {
    this.assertUsable();
    return this.pushSubscriptions.list();
  }

  /**
   * Deletes the topic's push subscription: true if there was one. Pushes in flight finish;
   * the topic's tasks go to pull consumers again.
   */
  async deletePush(topic: string): Promise<boolean> {
    this.assertOpen();
    validateTopic(topic, this.limits);
    return this.pushSubscriptions.delete(topic);
  }

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
    this.closeSignal.abort();
    // Workers stop reserving now; their running handlers are awaited below.
    const workersClosed = Promise.all([...this.workers].map((w) => w.close()));
    await this.scheduler.stop();
    await workersClosed;
    await this.inFlight.settled();
    this.phase = 'closed';
    this.scheduler.seal();
    await this.store.close();
  }

  // Internals

  private assertOpen(): void {
    if (this.phase !== 'open') throw new DelayQError('QUEUE_CLOSED', 'the queue is closing or closed');
  }

  /** Settling and reading stay allowed while closing, so running handlers can ack. */
  private assertUsable(): void {
    if (this.phase === 'closed') throw new DelayQError('QUEUE_CLOSED', 'the queue is closed');
  }
}

function staleReceipt(id: string): DelayQError {
  return new DelayQError('STALE_RECEIPT', `task ${id}: the receipt is not the current reservation`, { id });
}
