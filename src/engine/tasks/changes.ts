/**
 * The task changes of producers and operators (schedule, cancel, reschedule, retryDead,
 * cancelDead) for the facade: checks the call (core/task/validate.ts), makes the store
 * change, and has the timer routes place, move or forget the task's timer. The consumers'
 * changes (ack, nack) are settlements.ts.
 */
import { DelayQError } from '../../core/errors.js';
import { PartialBatchError } from '../../core/partial-batch.js';
import type { CancelOutcome, RescheduleOutcome, ScheduleOutcome, SqlTransaction, StoreCancelOutcome, TaskStore, TransactionalTasks } from '../../core/ports/index.js';
import { resolveRunAt, validateId, validateIdBatch, validateScheduleBatch, validateWhen, type Limits, type ScheduleInput, type TaskDefaults, type WhenInput } from '../../core/task/validate.js';
import { topicOfLane } from '../../core/task/model.js';
import { createIdGenerator } from './ids.js';
import type { LoopContext } from '../loop-context.js';
import type { PushRules } from '../push/push-rules.js';
import type { TimerRoutes } from '../timers/timer-routes.js';
import { scheduleTraced } from '../tracing/tracing.js';

export interface TaskChangesParams {
  readonly timers: Pick<TimerRoutes, 'createTasks' | 'remove' | 'move'>;
  /** Checks the tasks with their own push url. */
  readonly push: Pick<PushRules, 'checkTargets'>;
  readonly limits: Limits;
  readonly defaults: TaskDefaults;
}

export class TaskChanges {
  private readonly context: LoopContext;
  private readonly timers: TaskChangesParams['timers'];
  private readonly push: TaskChangesParams['push'];
  private readonly limits: Limits;
  private readonly defaults: TaskDefaults;
  private readonly makeId: () => string;

  constructor(context: LoopContext, { timers, push, limits, defaults }: TaskChangesParams) {
    this.context = context;
    this.timers = timers;
    this.push = push;
    this.limits = limits;
    this.defaults = defaults;
    this.makeId = createIdGenerator(() => context.clock.now());
  }

  /** Every task is checked first: one bad task rejects the call (its index in `details.index`), nothing stored. */
  async scheduleMany(inputs: readonly ScheduleInput[]): Promise<ScheduleOutcome[]> {
    const records = validateScheduleBatch(inputs, this.context.clock.now(), this.makeId, this.limits, this.defaults);
    if (records.length === 0) return [];
    if (records.some((r) => r.url !== undefined)) await this.push.checkTargets(records);
    return scheduleTraced(records, (traced) => this.timers.createTasks(traced));
  }

  /**
   * `scheduleMany` inside the caller's transaction: the store writes it there and places no
   * timer now; its timers reach the owning process by a notice sent on commit (nothing of a
   * rolled back transaction). Counted by no metric here: the transaction may still roll back.
   */
  async scheduleInTransaction(inputs: readonly ScheduleInput[], tx: SqlTransaction): Promise<ScheduleOutcome[]> {
    const transactional = transactionalOf(this.context.store, 'schedule');
    const records = validateScheduleBatch(inputs, this.context.clock.now(), this.makeId, this.limits, this.defaults);
    if (records.length === 0) return [];
    if (records.some((r) => r.url !== undefined)) await this.push.checkTargets(records);
    return scheduleTraced(records, (traced) => this.context.inFlight.track(transactional.schedule(tx, traced, this.context.clock.now())));
  }

  /**
   * `cancel` inside the caller's transaction. The task's timer stays where it is: if the
   * transaction rolls back the task is still pending and must fire; if it commits, the
   * timer finds it cancelled and delivers nothing.
   */
  async cancelInTransaction(id: string, tx: SqlTransaction): Promise<CancelOutcome> {
    const transactional = transactionalOf(this.context.store, 'cancel');
    validateId(id, this.limits);
    const outcome = await this.context.inFlight.track(transactional.cancel(tx, id, this.context.clock.now()));
    return outcome.status;
  }

  async cancel(id: string): Promise<CancelOutcome> {
    validateId(id, this.limits);
    const { store, clock, inFlight, observer, events } = this.context;
    const now = clock.now();
    const outcome = await inFlight.track(store.tasks.cancel(id, now));
    if (outcome.status !== 'cancelled') return outcome.status;
    // The store's topic: the timer's is the task's lane, and a far task has none in the wheel.
    this.timers.remove(id);
    observer.settled(outcome.topic, 'cancelled');
    events.emit({ type: 'cancelled', id, topic: outcome.topic, attempt: null, at: now });
    return 'cancelled';
  }

  /** Every id is checked first, so a bad one cancels nothing. */
  async cancelMany(ids: readonly string[]): Promise<CancelOutcome[]> {
    validateIdBatch(ids, this.limits);
    const { store, clock, inFlight, observer, events } = this.context;
    const now = clock.now();
    const settle = (outcome: StoreCancelOutcome, i: number): CancelOutcome => {
      if (outcome.status !== 'cancelled') return outcome.status;
      this.timers.remove(ids[i]!);
      observer.settled(outcome.topic, 'cancelled');
      events.emit({ type: 'cancelled', id: ids[i]!, topic: outcome.topic, attempt: null, at: now });
      return 'cancelled';
    };
    // A partition that could not be written fails only its ids: the others are cancelled.
    const outcomes = await inFlight.track(store.tasks.cancelMany(ids, now)).catch((error: unknown) => {
      throw error instanceof PartialBatchError ? (error as PartialBatchError<StoreCancelOutcome>).map(settle) : error;
    });
    return outcomes.map(settle);
  }

  async reschedule(id: string, when: WhenInput): Promise<RescheduleOutcome> {
    validateId(id, this.limits);
    const { store, clock, inFlight, events } = this.context;
    const now = clock.now();
    const outcome = await inFlight.track(store.tasks.reschedule(id, validateWhen(when, now, this.limits), now));
    if (outcome.status === 'rescheduled') {
      this.timers.move(outcome.ref);
      events.emit({ type: 'rescheduled', id, topic: topicOfLane(outcome.ref.topic), attempt: null, at: now, runAt: outcome.ref.dueAt });
    }
    return outcome;
  }

  /** dead -> cancelled: true if it was dead. */
  async cancelDead(id: string): Promise<boolean> {
    validateId(id, this.limits);
    const { store, clock, inFlight } = this.context;
    return (await inFlight.track(store.tasks.cancelDead(id, clock.now()))) === 'cancelled';
  }

  /** dead -> pending (attempts reset): true if it was dead. */
  async retryDead(id: string, when: WhenInput): Promise<boolean> {
    validateId(id, this.limits);
    const { store, clock, inFlight, events } = this.context;
    const now = clock.now();
    const outcome = await inFlight.track(store.tasks.retryDead(id, resolveRunAt(when, now, this.limits), now));
    if (outcome.status === 'retried') {
      this.timers.move(outcome.ref);
      // Attempts reset: the task starts again from its first attempt.
      events.emit({ type: 'rescheduled', id, topic: topicOfLane(outcome.ref.topic), attempt: 0, at: now, runAt: outcome.ref.dueAt });
    }
    return outcome.status === 'retried';
  }
}

/** The store's transactional role (only the PostgreSQL store has one), or INVALID_ARGUMENT: this store cannot `what` inside the caller's transaction. */
export function transactionalOf(store: Pick<TaskStore, 'transactional' | 'description'>, what: string): TransactionalTasks {
  const { transactional, description } = store;
  if (transactional === null) throw new DelayQError('INVALID_ARGUMENT', `tx: the ${description.split(':')[0] ?? description} store cannot ${what} inside a transaction of yours (the PostgreSQL store can)`, { field: 'tx' });
  return transactional;
}
