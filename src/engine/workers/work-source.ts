import { isDelayQError } from '../../core/errors.js';
import type { QueueObserver } from '../../core/observer.js';
import type { StoreAckOutcome, Clock, ConsumerStore, Logger, SqlTransaction } from '../../core/ports/index.js';
import type { Delivery } from '../../core/task/model.js';
import type { LoopContext } from '../loop-context.js';
import type { Held } from './renewer.js';
import type { NackResult } from '../queue-types.js';
import type { Settlements } from '../tasks/settlements.js';
import type { HandlerNackOptions, Job } from './job.js';
import { DeferTo, RetryAfter, type Outcome } from './outcomes.js';
import type { WorkSource } from './worker.js';

/** A work source's own: the loop runner it reserves through, and how its failed handlers are settled. */
export interface WorkSourceParams {
  readonly runner: WorkerHooks;
  /** The queue's own nack (validated like a consumer's; it places the retry's timer). */
  readonly nack: (delivery: Delivery, error: string, delayMs?: number, outcome?: string) => Promise<unknown>;
  /** The runner's defer (it places the deferred task's timer); without it a DeferTo nacks. */
  readonly defer?: (delivery: Delivery, runAt: number) => Promise<unknown>;
  /** What a handler's own `ctx.ack` and `ctx.nack` go through. */
  readonly settlements?: Pick<Settlements, 'ack' | 'nack' | 'ackInTransaction' | 'nackInTransaction' | 'confirmed'>;
}

/** What the workers need of the queue's loop runner. */
export interface WorkerHooks {
  reserve(topic: string, max: number, signal: AbortSignal, ttrMs: number | undefined, watch: boolean): Promise<Delivery[]>;
  /** Forgets the task's timer: its reservation is settled. */
  remove(id: string): unknown;
  /** Told of each ack. */
  readonly observer: QueueObserver;
  /** A delivery of `topic` (its receipt) was acked: its flow slot, if its topic has a concurrency, is freed. */
  settled(topic: string, receipt: string): void;
  /** Arms the reservation's TTR timer. */
  watch(delivery: Delivery): void;
  /** Renews a running handler's reservation until dropped (renewer.ts). */
  hold(held: Held): void;
  drop(held: Held): void;
}

/**
 * The queue as its workers see it (WorkSource). Deliveries come from the loop runner with no
 * TTR timer: most handlers settle within the same turn of the event loop, and the worker
 * has `watch` arm the timers of those still running after it. The acks of handlers that
 * finished in the same turn go to the store in one ackMany: the hot path, so the
 * deliveries (the queue's own) are not validated again and cost no async frame. A failed
 * handler's task is nacked. When the store cannot take a settlement the reservation stays,
 * and its TTR timer is armed so that the task is delivered again once it runs out. Nothing
 * here rejects.
 */
export class QueueWorkSource implements WorkSource {
  private readonly store: Pick<ConsumerStore, 'ack' | 'ackMany'>;
  readonly clock: Clock;
  private readonly logger: Logger;
  /** The pause after a failed reserve. */
  private readonly storeRetryMs: number;
  private readonly runner: WorkerHooks;
  private readonly events: LoopContext['events'];
  private readonly nack: WorkSourceParams['nack'];
  private readonly deferDelivery: WorkSourceParams['defer'];
  private readonly settlements: WorkSourceParams['settlements'];

  constructor(context: Pick<LoopContext, 'store' | 'clock' | 'logger' | 'tuning' | 'events'>, { runner, nack, defer, settlements }: WorkSourceParams) {
    ({ store: { tasks: this.store }, clock: this.clock, logger: this.logger, events: this.events } = context);
    this.storeRetryMs = context.tuning.storeRetryMs;
    this.runner = runner;
    this.nack = nack;
    this.deferDelivery = defer;
    this.settlements = settlements;
  }

  private ownSettlements(): NonNullable<WorkSourceParams['settlements']> {
    const settlements = this.settlements;
    if (settlements === undefined) throw new Error('this worker settles its deliveries itself');
    return settlements;
  }

  async handlerAck(job: Job, tx: SqlTransaction | undefined): Promise<void> {
    const { id, receipt } = job.delivery;
    return tx === undefined ? this.ownSettlements().ack(id, receipt) : this.ownSettlements().ackInTransaction(id, receipt, tx);
  }

  async handlerNack(job: Job, options: HandlerNackOptions): Promise<NackResult> {
    const { id, receipt } = job.delivery;
    const { tx, ...nack } = options;
    return tx === undefined ? this.ownSettlements().nack(id, receipt, nack) : this.ownSettlements().nackInTransaction(id, receipt, nack, tx);
  }

  confirm(job: Job): Promise<unknown> {
    const watch = (): void => {
      if (job.watched) return;
      job.watched = true;
      this.runner.watch(job.delivery);
    };
    return this.ownSettlements()
      .confirmed(job.delivery, watch)
      .catch((error: unknown) => {
        this.logger.error({ err: error, id: job.delivery.id }, 'reading back a delivery its handler settled in a transaction failed; its ttr timer is armed');
        watch();
      });
  }

  // The worker's own signal suffices: close() closes every worker first.
  reserveFor(topic: string, max: number, signal: AbortSignal, ttrMs: number | undefined): Promise<Delivery[]> {
    return this.runner.reserve(topic, max, signal, ttrMs, false);
  }

  watch(delivery: Delivery): void {
    this.runner.watch(delivery);
  }

  hold(job: Job): void {
    this.runner.hold(job);
  }

  drop(job: Job): void {
    this.runner.drop(job);
  }

  defer(callback: () => void): void {
    this.clock.setTimer(callback, 0);
  }

  reportError(error: unknown, context: string): void {
    this.logger.error({ err: error }, context);
  }

  pauseAfterFailure(): Promise<void> {
    return new Promise<void>((resolve) => this.clock.setTimer(resolve, this.storeRetryMs));
  }

  ackAll(jobs: readonly Job[]): Promise<void> {
    return this.store.ackMany(jobs.map((job) => job.delivery), this.clock.now()).then(
      (outcomes) => {
        for (let i = 0; i < jobs.length; i++) this.afterAck(jobs[i]!, outcomes[i] ?? NOT_FOUND);
      },
      (error: unknown) => this.failed(jobs, error),
    );
  }

  settle(job: Job, outcome: Outcome): Promise<unknown> {
    if (outcome.ok) {
      return this.store.ack(job.delivery.id, job.delivery.receipt, this.clock.now()).then(
        (acked) => this.afterAck(job, acked),
        (error: unknown) => this.failed([job], error),
      );
    }
    if (outcome.error instanceof DeferTo && this.deferDelivery !== undefined) {
      return this.deferDelivery(job.delivery, outcome.error.runAt).catch((failure: unknown) => this.failed([job], failure));
    }
    const error = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
    const delayMs = outcome.error instanceof RetryAfter && outcome.error.delayMs !== null ? outcome.error.delayMs : undefined;
    const attemptOutcome = outcome.error instanceof RetryAfter ? outcome.error.outcome : undefined;
    return this.nack(job.delivery, error, delayMs, attemptOutcome).catch((failure: unknown) => {
      // A stale receipt means the reservation already ran out and the task moved on.
      if (isDelayQError(failure, 'STALE_RECEIPT') || isDelayQError(failure, 'TASK_NOT_FOUND'))
        this.logger.warn({ id: job.delivery.id, code: failure.code }, 'nack after the reservation ran out');
      else this.failed([job], failure);
    });
  }

  private afterAck(job: Job, acked: StoreAckOutcome): void {
    if (acked.status === 'not_found' || acked.status === 'stale') {
      this.logger.warn({ id: job.delivery.id, outcome: acked.status }, 'ack after the reservation ran out; the task was or will be delivered again');
    } else {
      // `already_acked`: the same delivery acked twice in one batch; counted once.
      if (acked.status === 'acked') {
        this.runner.observer.settled(acked.topic, 'acked');
        this.events.emit({ type: 'acked', id: job.delivery.id, topic: acked.topic, attempt: job.delivery.attempt, at: this.clock.now() });
        this.runner.settled(acked.topic, job.delivery.receipt);
      }
      if (job.watched) this.runner.remove(job.delivery.id);
    }
  }

  /** The store did not take the acks or nack: the reservations stay, so their TTRs must be armed. */
  private failed(jobs: readonly Job[], error: unknown): void {
    const ids = jobs.length === 1 ? jobs[0]!.delivery.id : `${jobs.length} deliveries`;
    this.logger.error({ err: error, id: ids }, 'settling deliveries failed; they will be delivered again after their TTR');
    for (const job of jobs) {
      if (job.watched) continue;
      job.watched = true;
      this.runner.watch(job.delivery);
    }
  }
}

/** A batch's answer short of an outcome for a job (it never is): treated as an ack that found nothing. */
const NOT_FOUND: StoreAckOutcome = { status: 'not_found' };
