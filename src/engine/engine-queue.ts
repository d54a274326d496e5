/**
 * EngineQueue: the library API over one store, a facade over the parts that queue-parts.ts
 * builds. Task changes (tasks/changes.ts), settlements (tasks/settlements.ts) and reads
 * (tasks/inspection.ts) check each call, make the store change and tell the LoopRunner
 * (loop-runner.ts), which owns the loops and every timer; push-rules.ts keeps the push rules.
 * The facade checks that the queue is open, hands out consumers, and owns its close.
 *
 * The engine knows its store by the ports alone (core/ports/): opening one by URL is the
 * composition root's job (src/open-queue.ts, whose DelayQueue extends this one with `open`).
 * The store is the authority on every task; the wheel and the ready queue are hints that
 * can be rebuilt from it, so a hint may be stale and a crash that loses them loses no task.
 */
import { DelayQError } from '../core/errors.js';
import { PartialBatchError } from '../core/partial-batch.js';
import type { AckOutcome, AckRequest, CancelOutcome, Clock, ScheduleOutcome, TaskStore } from '../core/ports/index.js';
import type { PushInput } from '../core/push-input.js';
import type { PushSubscription } from '../core/push.js';
import type { Delivery, TaskInfo } from '../core/task/model.js';
import { validateCloseOptions, validateReserveOptions, validateTopic, validateWorkOptions } from '../core/task/validate.js';
import type { Limits, ScheduleInput, WhenInput } from '../core/task/validate.js';
import type { PushPage, PushPageOptions, SetPushResult } from './push/push-rules.js';
import { buildQueueParts, type QueueParts } from './queue-parts.js';
import type { DueHistogramOptions, DueHistogramResult, EngineOptions, ExtendOptions, ExtendResult, ListOptions, NackOptions, NackResult, OutcomeOption, QueueStats, RescheduleResult, ReserveOptions, ScheduleResult, TaskPage, TransactionOption } from './queue-types.js';
import type { RecurringSchedules } from './recurring/recurring-schedules.js';
import type { Topics } from './topics/topics.js';
import type { Handler } from './workers/job.js';
import { Worker, type WorkerCloseOptions, type WorkOptions } from './workers/worker.js';
import { activeTracer } from './tracing/tracing.js';
import type { LoggedTaskEvent } from '../core/events.js';
import type { EventSubscription } from './events/task-events.js';

type Phase = 'open' | 'closing' | 'closed';
const OUTCOME: OutcomeOption = { outcome: true };

export class EngineQueue {
  /** The limits in force (defaults merged with the options). */
  readonly limits: Limits;
  readonly clock: Clock;
  /**
   * Recurring schedules (docs/cron.md): `upsert`, `get`, `list`, `remove`, `pause`,
   * `resume` and `next` (a preview). Each occurrence is an ordinary task with the id
   * `<schedule id>:<occurrence ms>`, created once however many processes share the store.
   */
  readonly schedules: RecurringSchedules;
  /**
   * Operations on a whole topic: `purge(topic, { state })` deletes its pending, dead or
   * completed (and cancelled) tasks in bounded steps and answers how many (docs/library.md).
   */
  readonly topics: Topics;
  private readonly parts: QueueParts;
  private readonly workers = new Set<Worker>();
  private readonly closeSignal = new AbortController();
  private phase: Phase = 'open';
  private closing: Promise<void> | null = null;

  /** Starts the engine over an open store, which close() will close. Options are checked first. */
  static start(store: TaskStore, options: EngineOptions = {}): EngineQueue {
    return new EngineQueue(store, options).startLoops();
  }

  /** Builds every part complete, the observer included (queue-parts.ts); nothing runs until startLoops(). */
  protected constructor(
    readonly store: TaskStore,
    options: EngineOptions,
  ) {
    this.parts = buildQueueParts(store, options, { assertOpen: () => this.assertOpen(), cancelMany: (ids) => this.cancelMany(ids) });
    ({ limits: this.limits, schedules: this.schedules, topics: this.topics } = this.parts);
    this.clock = this.parts.context.clock;
  }

  protected startLoops(): this {
    // Loads the OpenTelemetry glue now if this process set up OpenTelemetry, so a queue that only consumes makes spans too.
    activeTracer();
    this.parts.runner.start();
    return this;
  }

  /** Reads the store's paused topics and topic limits now (DelayQueue.open waits for it, so none is delivered past them after open resolves). */
  protected async readPausedTopics(): Promise<void> {
    await Promise.all([this.parts.runner.pauses.refresh(), this.parts.runner.flow.refresh()]);
  }

  // Producers

  /**
   * Schedules one task. Resolves once the store holds it (durably, for durable stores). With
   * `{ tx }` (the PostgreSQL store) it is written inside that transaction of yours and
   * exists if and only if the transaction commits.
   */
  async schedule(input: ScheduleInput, options?: TransactionOption): Promise<ScheduleResult> {
    const [result] = await this.scheduleMany([input], options);
    return result!;
  }

  /**
   * Schedules several tasks in one store write. Every task is validated first: one bad
   * task rejects the whole call (with its index in `details.index`) and nothing is stored.
   * With `{ tx }`, inside that transaction of yours (see `schedule`).
   */
  async scheduleMany(inputs: readonly ScheduleInput[], options?: TransactionOption): Promise<ScheduleResult[]> {
    this.assertOpen();
    const result = ({ id, runAt, created }: ScheduleOutcome): ScheduleResult => ({ id, runAt, created });
    const written = options?.tx === undefined ? this.parts.changes.scheduleMany(inputs) : this.parts.changes.scheduleInTransaction(inputs, options.tx);
    const outcomes = await written.catch((error: unknown) => {
      throw error instanceof PartialBatchError ? (error as PartialBatchError<ScheduleOutcome>).map(result) : error;
    });
    return outcomes.map(result);
  }

  /**
   * Cancels a pending task: true if it was pending and is now cancelled. With
   * `{ outcome: true }` it says why not: `not_found`, or `not_pending` (delivered already...).
   */
  cancel(id: string, options?: Partial<TransactionOption>): Promise<boolean>;
  cancel(id: string, options: OutcomeOption & Partial<TransactionOption>): Promise<CancelOutcome>;
  async cancel(id: string, options?: Partial<OutcomeOption & TransactionOption>): Promise<boolean | CancelOutcome> {
    this.assertOpen();
    // With `tx` (the PostgreSQL store): inside that transaction of yours, as it sees the task; cancelled only if it commits.
    const outcome = options?.tx === undefined ? await this.parts.changes.cancel(id) : await this.parts.changes.cancelInTransaction(id, options.tx);
    return options?.outcome === true ? outcome : outcome === 'cancelled';
  }

  /**
   * Cancels several tasks in one store call (up to `limits.maxBatch` ids): `result[i]` is
   * what `cancel(ids[i])` would answer. Every id is checked first, so a bad one rejects the
   * call and cancels nothing. If the store fails, the call rejects and some of the tasks
   * may be cancelled already; calling again answers false for those.
   */
  async cancelMany(ids: readonly string[]): Promise<boolean[]> {
    this.assertOpen();
    const outcomes = await this.parts.changes.cancelMany(ids).catch((error: unknown) => {
      throw error instanceof PartialBatchError ? (error as PartialBatchError<CancelOutcome>).map((o) => o === 'cancelled') : error;
    });
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
    const outcome = await this.parts.changes.reschedule(id, when);
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
    return this.parts.inspection.get<P>(id);
  }

  /** Tasks by id order, optionally of one topic and state; page with `afterId`. */
  async list<P = unknown>(options: ListOptions = {}): Promise<TaskInfo<P>[]> {
    this.assertUsable();
    return this.parts.inspection.list<P>(options);
  }

  /**
   * One page of tasks by id order (as GET /v1/tasks): at most `limit` (default 100, at most
   * 10,000), and fewer once they pass 4 MiB of payloads, errors and history (the page ends
   * after the task that passes it); `next` is the `afterId` of the next page, null on the last.
   */
  async listPage<P = unknown>(options: ListOptions = {}): Promise<TaskPage<P>> {
    this.assertUsable();
    return this.parts.inspection.listPage<P>(options);
  }

  async stats(): Promise<QueueStats> {
    this.assertUsable();
    return this.parts.inspection.stats();
  }

  /**
   * How many pending tasks fall due per bucket (of one topic, or all) between `from` and
   * `to`: the timeline. The store answers from its index, in buckets of whole minutes;
   * `coveredUntil` says how far its index reaches (SQLite and Redis park far-future tasks).
   */
  async dueHistogram(options: DueHistogramOptions = {}): Promise<DueHistogramResult> {
    this.assertUsable();
    return this.parts.inspection.dueHistogram(options);
  }

  /**
   * Gives up on a dead task: dead -> cancelled, purged after `retentionMs` like any finished
   * task. True if it was dead.
   */
  async cancelDead(id: string): Promise<boolean> {
    this.assertOpen();
    return this.parts.changes.cancelDead(id);
  }

  /** Brings a dead task back to pending (attempts reset), due now or at the given time. */
  async retryDead(id: string, when: WhenInput = {}): Promise<boolean> {
    this.assertOpen();
    return this.parts.changes.retryDead(id, when);
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
    const signals = options.signal ? [this.closeSignal.signal, options.signal] : [this.closeSignal.signal];
    return (await this.parts.runner.longPoll(topic, max, waitMs, ttrMs, signals)) as Delivery<P>[];
  }

  /**
   * Acks a delivery: the task is done. Throws STALE_RECEIPT if the reservation is not current.
   * With `{ tx }` (the PostgreSQL store), inside that transaction of yours: the task is
   * completed if and only if it commits, and a rollback leaves the reservation as it was (it
   * runs out at its ttr and the task is delivered again). After COMMIT, the same ack without
   * `tx` answers at once and frees what this process held for the delivery (a topic's
   * concurrency slot) instead of at the end of the reservation.
   */
  async ack(id: string, receipt: string, options?: TransactionOption): Promise<void> {
    this.assertUsable();
    if (options?.tx !== undefined) return this.parts.settlements.ackInTransaction(id, receipt, options.tx);
    return this.parts.settlements.ack(id, receipt);
  }

  /**
   * Acks several deliveries in one store call (up to `limits.maxBatch`), for consumers that
   * reserve a batch and settle it together: `result[i]` is `'acked'`, `'stale'` (the receipt
   * is not the current reservation's: STALE_RECEIPT for `ack`) or `'not_found'`. Every id
   * and receipt is checked first.
   */
  async ackMany(acks: readonly AckRequest[]): Promise<AckOutcome[]> {
    this.assertUsable();
    return this.parts.settlements.ackMany(acks);
  }

  /**
   * Gives a reservation in force more time: it now runs out `ttrMs` from now (default: the
   * task's own ttrMs), and the answer is its new `reservedUntil`. For pull consumers whose
   * work takes longer than they reserved for (`work` handlers are renewed without asking).
   * Throws STALE_RECEIPT when the receipt names no reservation in force: settled, expired,
   * or run out even if not yet expired (an extension never revives one), and TASK_NOT_FOUND.
   */
  async extend(id: string, receipt: string, options?: ExtendOptions): Promise<ExtendResult> {
    this.assertUsable();
    return this.parts.settlements.extend(id, receipt, options);
  }

  /**
   * Fails a delivery: the task is retried (after `delayMs`, or its backoff) or, out of
   * attempts, dead. Throws STALE_RECEIPT if the reservation is not current.
   */
  async nack(id: string, receipt: string, options: NackOptions & Partial<TransactionOption> = {}): Promise<NackResult> {
    this.assertUsable();
    const { tx, ...nack } = options;
    if (tx !== undefined) return this.parts.settlements.nackInTransaction(id, receipt, nack, tx);
    return this.parts.settlements.nack(id, receipt, nack);
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
    const { concurrency, ttrMs, timeoutMs } = validateWorkOptions(options, this.limits);
    const worker = new Worker(this.parts.workSource, { topic, handler: handler as Handler, concurrency, ttrMs, timeoutMs });
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
    return this.parts.push.set(topic, input);
  }

  /** The topic's push subscription (secrets masked), or null. */
  async getPush(topic: string): Promise<PushSubscription | null> {
    this.assertUsable();
    return this.parts.push.get(topic);
  }

  /** Every push subscription by topic (secrets masked). */
  async listPush(): Promise<PushSubscription[]> {
    this.assertUsable();
    return this.parts.push.list();
  }

  /** One page of the push subscriptions by topic (secrets masked): after `after`, at most `limit` (default 100, at most 1,000); `next` is the `after` of the next page, null on the last. */
  async listPushPage(options: PushPageOptions = {}): Promise<PushPage> {
    this.assertUsable();
    return this.parts.push.listPage(options);
  }

  /**
   * Deletes the topic's push subscription: true if there was one. Pushes in flight finish;
   * the topic's tasks go to pull consumers again.
   */
  async deletePush(topic: string): Promise<boolean> {
    this.assertOpen();
    return this.parts.push.delete(topic);
  }

  // Lifecycle events

  /**
   * The lifecycle events (scheduled, delivered, acked, failed, dead, cancelled, rescheduled)
   * of every process writing to the store's log, as an async iterable: from now on, or after
   * `after` (an `eventId`) while the log still keeps it; of one `topic` and some `types` if
   * given. Ends with the queue, `signal`, or `break`. At most once: an event can be lost
   * (docs/library.md, "Lifecycle events"). INVALID_OPTION unless the queue was opened with
   * `events: true`.
   */
  events(options: EventSubscription = {}): AsyncIterableIterator<LoggedTaskEvent> {
    this.assertOpen();
    return this.parts.events.subscribe(options, this.limits.maxTopicLength);
  }

  // Lifecycle

  /**
   * Graceful stop: refuses new calls, ends long-polls, lets running handlers finish and
   * settle (renewing their reservations meanwhile), waits for store writes in flight, then
   * closes the store. With `timeoutMs` it waits at most that long for `work` handlers: each
   * one still running then is told to stop (its signal aborts with WORKER_CLOSED) and its
   * reservation is given back uncounted. Idempotent: a second call answers the first's promise.
   */
  close(options?: WorkerCloseOptions): Promise<void> {
    this.closing ??= this.shutdown(validateCloseOptions(options));
    return this.closing;
  }

  get closed(): boolean {
    return this.phase !== 'open';
  }

  private async shutdown(options: WorkerCloseOptions): Promise<void> {
    this.phase = 'closing';
    this.closeSignal.abort();
    // Workers stop reserving now; their running handlers are awaited below, renewed meanwhile.
    const workersClosed = Promise.all([...this.workers].map((w) => w.close(options)));
    await this.parts.runner.stop();
    await workersClosed;
    this.parts.runner.renewer.stop();
    await this.parts.context.inFlight.settled();
    await this.parts.events.drain();
    this.parts.events.stop();
    this.phase = 'closed';
    this.parts.runner.seal();
    await this.store.close();
  }

  private assertOpen(): void {
    if (this.phase !== 'open') throw new DelayQError('QUEUE_CLOSED', 'the queue is closing or closed');
  }

  /** Settling and reading stay allowed while closing, so running handlers can ack. */
  private assertUsable(): void {
    if (this.phase === 'closed') throw new DelayQError('QUEUE_CLOSED', 'the queue is closed');
  }
}
