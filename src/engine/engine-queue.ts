/**
 * EngineQueue: the library API over one store, a facade over the parts that queue-parts.ts
 * builds. Task changes (tasks/changes.ts), settlements (tasks/settlements.ts) and reads
 * (tasks/inspection.ts) check each call, make the store change and tell the LoopRunner
 * (loop-runner.ts), which owns the loops and every timer; push-rules.ts keeps the push rules.
 * The facade checks that the queue is open, hands out consumers, and owns its close. What
 * each call promises is documented once, on the interface it implements (queue-api.ts).
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
import type { QueueApi } from './queue-api.js';
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

export class EngineQueue implements QueueApi {
  readonly limits: Limits;
  readonly clock: Clock;
  readonly schedules: RecurringSchedules;
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

  async schedule(input: ScheduleInput, options?: TransactionOption): Promise<ScheduleResult> {
    const [result] = await this.scheduleMany([input], options);
    return result!;
  }

  async scheduleMany(inputs: readonly ScheduleInput[], options?: TransactionOption): Promise<ScheduleResult[]> {
    this.assertOpen();
    const result = ({ id, runAt, created }: ScheduleOutcome): ScheduleResult => ({ id, runAt, created });
    const written = options?.tx === undefined ? this.parts.changes.scheduleMany(inputs) : this.parts.changes.scheduleInTransaction(inputs, options.tx);
    const outcomes = await written.catch((error: unknown) => {
      throw error instanceof PartialBatchError ? (error as PartialBatchError<ScheduleOutcome>).map(result) : error;
    });
    return outcomes.map(result);
  }

  cancel(id: string, options?: Partial<TransactionOption>): Promise<boolean>;
  cancel(id: string, options: OutcomeOption & Partial<TransactionOption>): Promise<CancelOutcome>;
  async cancel(id: string, options?: Partial<OutcomeOption & TransactionOption>): Promise<boolean | CancelOutcome> {
    this.assertOpen();
    // With `tx` (the PostgreSQL store): inside that transaction of yours, as it sees the task; cancelled only if it commits.
    const outcome = options?.tx === undefined ? await this.parts.changes.cancel(id) : await this.parts.changes.cancelInTransaction(id, options.tx);
    return options?.outcome === true ? outcome : outcome === 'cancelled';
  }

  async cancelMany(ids: readonly string[]): Promise<boolean[]> {
    this.assertOpen();
    const outcomes = await this.parts.changes.cancelMany(ids).catch((error: unknown) => {
      throw error instanceof PartialBatchError ? (error as PartialBatchError<CancelOutcome>).map((o) => o === 'cancelled') : error;
    });
    return ids.map((_, i) => outcomes[i] === 'cancelled');
  }

  reschedule(id: string, when: WhenInput): Promise<boolean>;
  reschedule(id: string, when: WhenInput, options: OutcomeOption): Promise<RescheduleResult>;
  async reschedule(id: string, when: WhenInput, options?: OutcomeOption): Promise<boolean | RescheduleResult> {
    this.assertOpen();
    const outcome = await this.parts.changes.reschedule(id, when);
    if (!options?.outcome) return outcome.status === 'rescheduled';
    return outcome.status === 'rescheduled' ? { status: 'rescheduled', runAt: outcome.ref.dueAt } : { status: outcome.status };
  }

  cancelTask(id: string): Promise<CancelOutcome> {
    return this.cancel(id, OUTCOME);
  }

  rescheduleTask(id: string, when: WhenInput): Promise<RescheduleResult> {
    return this.reschedule(id, when, OUTCOME);
  }

  // Inspection

  async get<P = unknown>(id: string): Promise<TaskInfo<P> | null> {
    this.assertUsable();
    return this.parts.inspection.get<P>(id);
  }

  async list<P = unknown>(options: ListOptions = {}): Promise<TaskInfo<P>[]> {
    this.assertUsable();
    return this.parts.inspection.list<P>(options);
  }

  async listPage<P = unknown>(options: ListOptions = {}): Promise<TaskPage<P>> {
    this.assertUsable();
    return this.parts.inspection.listPage<P>(options);
  }

  async stats(): Promise<QueueStats> {
    this.assertUsable();
    return this.parts.inspection.stats();
  }

  async dueHistogram(options: DueHistogramOptions = {}): Promise<DueHistogramResult> {
    this.assertUsable();
    return this.parts.inspection.dueHistogram(options);
  }

  async cancelDead(id: string): Promise<boolean> {
    this.assertOpen();
    return this.parts.changes.cancelDead(id);
  }

  async retryDead(id: string, when: WhenInput = {}): Promise<boolean> {
    this.assertOpen();
    return this.parts.changes.retryDead(id, when);
  }

  // Consumers

  async reserve<P = unknown>(topic: string, options: ReserveOptions = {}): Promise<Delivery<P>[]> {
    this.assertOpen();
    validateTopic(topic, this.limits);
    const { max, waitMs, ttrMs } = validateReserveOptions(options, this.limits);
    const signals = options.signal ? [this.closeSignal.signal, options.signal] : [this.closeSignal.signal];
    return (await this.parts.runner.longPoll(topic, max, waitMs, ttrMs, signals)) as Delivery<P>[];
  }

  async ack(id: string, receipt: string, options?: TransactionOption): Promise<void> {
    this.assertUsable();
    if (options?.tx !== undefined) return this.parts.settlements.ackInTransaction(id, receipt, options.tx);
    return this.parts.settlements.ack(id, receipt);
  }

  async ackMany(acks: readonly AckRequest[]): Promise<AckOutcome[]> {
    this.assertUsable();
    return this.parts.settlements.ackMany(acks);
  }

  async extend(id: string, receipt: string, options?: ExtendOptions): Promise<ExtendResult> {
    this.assertUsable();
    return this.parts.settlements.extend(id, receipt, options);
  }

  async nack(id: string, receipt: string, options: NackOptions & Partial<TransactionOption> = {}): Promise<NackResult> {
    this.assertUsable();
    const { tx, ...nack } = options;
    if (tx !== undefined) return this.parts.settlements.nackInTransaction(id, receipt, nack, tx);
    return this.parts.settlements.nack(id, receipt, nack);
  }

  work<P = unknown>(topic: string, handler: Handler<P>, options: WorkOptions = {}): Worker {
    this.assertOpen();
    validateTopic(topic, this.limits);
    const { concurrency, ttrMs, timeoutMs } = validateWorkOptions(options, this.limits);
    const worker = new Worker(this.parts.workSource, { topic, handler: handler as Handler, concurrency, ttrMs, timeoutMs });
    this.workers.add(worker);
    return worker;
  }

  // Push delivery (docs/push.md)

  async setPush(topic: string, input: PushInput): Promise<SetPushResult> {
    this.assertOpen();
    return this.parts.push.set(topic, input);
  }

  async getPush(topic: string): Promise<PushSubscription | null> {
    this.assertUsable();
    return this.parts.push.get(topic);
  }

  async listPush(): Promise<PushSubscription[]> {
    this.assertUsable();
    return this.parts.push.list();
  }

  async listPushPage(options: PushPageOptions = {}): Promise<PushPage> {
    this.assertUsable();
    return this.parts.push.listPage(options);
  }

  async deletePush(topic: string): Promise<boolean> {
    this.assertOpen();
    return this.parts.push.delete(topic);
  }

  // Lifecycle events

  events(options: EventSubscription = {}): AsyncIterableIterator<LoggedTaskEvent> {
    this.assertOpen();
    return this.parts.events.subscribe(options, this.limits.maxTopicLength);
  }

  // Lifecycle

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
