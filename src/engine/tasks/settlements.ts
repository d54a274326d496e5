/**
 * Settling deliveries (ack, ackMany, nack) for the facade and the workers, and extending a
 * reservation (extend): checks the call (core/task/validate.ts), makes the store change,
 * tells the observer, and has the timer routes forget the reservation's TTR timer, move it, or
 * place the retry's run timer.
 *
 * The store fences every settlement by its receipt, so a settlement that lost the race
 * with an expiry (or a second one) changes nothing and answers STALE_RECEIPT.
 */
import { DelayQError } from '../../core/errors.js';
import { attemptOfReceipt } from '../../core/events.js';
import { PartialBatchError } from '../../core/partial-batch.js';
import type { AckOutcome, AckRequest, SqlTransaction, StoreAckOutcome } from '../../core/ports/index.js';
import type { Delivery } from '../../core/task/model.js';
import { validateAckBatch, validateExtendOptions, validateId, validateNackOptions, validateReceipt, type Limits } from '../../core/task/validate.js';
import type { LoopContext } from '../loop-context.js';
import type { ExtendOptions, ExtendResult, NackOptions, NackResult } from '../queue-types.js';
import type { TimerRoutes } from '../timers/timer-routes.js';
import type { FlowControl } from '../topics/flow-control.js';
import { transactionalOf } from './changes.js';

export interface SettlementsParams {
  readonly timers: Pick<TimerRoutes, 'remove' | 'move' | 'extended'>;
  /** Frees a settled delivery's flow slot. */
  readonly flow: Pick<FlowControl, 'settled'>;
  readonly limits: Limits;
  /** Randomness for backoff jitter. */
  readonly random: () => number;
}

export class Settlements {
  private readonly context: LoopContext;
  private readonly timers: SettlementsParams['timers'];
  private readonly flow: SettlementsParams['flow'];
  private readonly limits: Limits;
  private readonly random: () => number;

  constructor(context: LoopContext, { timers, flow, limits, random }: SettlementsParams) {
    this.context = context;
    this.timers = timers;
    this.flow = flow;
    this.limits = limits;
    this.random = random;
  }

  /** Acks a delivery: the task is done. Throws STALE_RECEIPT if the reservation is not current. */
  async ack(id: string, receipt: string): Promise<void> {
    validateId(id, this.limits);
    const { store, clock, inFlight, observer, events } = this.context;
    const now = clock.now();
    const outcome = await inFlight.track(store.tasks.ack(id, validateReceipt(receipt), now));
    if (outcome.status === 'not_found') throw notFound(id);
    if (outcome.status === 'stale') throw staleReceipt(id);
    this.timers.remove(id);
    // An ack sent again succeeded before, and was counted then.
    if (outcome.status === 'acked') {
      observer.settled(outcome.topic, 'acked');
      events.emit({ type: 'acked', id, topic: outcome.topic, attempt: attemptOfReceipt(receipt), at: now });
      this.flow.settled(outcome.topic, receipt);
    }
  }

  /** Acks several deliveries in one store call; `result[i]` answers `acks[i]`. Every id and receipt is checked first. */
  async ackMany(acks: readonly AckRequest[]): Promise<AckOutcome[]> {
    const requests = validateAckBatch(acks, this.limits);
    const { store, clock, inFlight, observer, events } = this.context;
    const now = clock.now();
    const settle = (outcomes: readonly (StoreAckOutcome | undefined)[]): void => {
      for (let i = 0; i < requests.length; i++) {
        const outcome = outcomes[i];
        if (outcome === undefined || (outcome.status !== 'acked' && outcome.status !== 'already_acked')) continue;
        this.timers.remove(requests[i]!.id);
        // An ack sent again succeeded before, and was counted then.
        if (outcome.status === 'acked') {
          const { id, receipt } = requests[i]!;
          observer.settled(outcome.topic, 'acked');
          events.emit({ type: 'acked', id, topic: outcome.topic, attempt: attemptOfReceipt(receipt), at: now });
          this.flow.settled(outcome.topic, receipt);
        }
      }
    };
    // A partition that could not be written fails only its acks: the others are done, and
    // the caller hears their outcomes as it would have (already_acked is acked to it).
    const outcomes = await inFlight.track(store.tasks.ackMany(requests, now)).catch((error: unknown) => {
      if (!(error instanceof PartialBatchError)) throw error;
      const partial = error as PartialBatchError<StoreAckOutcome>;
      settle(partial.outcomes);
      throw partial.map(publicAckOutcome);
    });
    settle(outcomes);
    return outcomes.map(publicAckOutcome);
  }

  /**
   * Extends a reservation in force to now + `ttrMs` (default: the task's own ttrMs) and
   * answers its new end. STALE_RECEIPT when the receipt names no reservation in force (one
   * settled, expired or run out: it is never revived), TASK_NOT_FOUND for no such task.
   */
  async extend(id: string, receipt: string, options?: ExtendOptions): Promise<ExtendResult> {
    validateId(id, this.limits);
    const checked = validateReceipt(receipt);
    const { ttrMs } = validateExtendOptions(options, this.limits);
    const { store, clock, inFlight } = this.context;
    const [outcome] = await inFlight.track(store.tasks.extend([{ id, receipt: checked, ttrMs }], clock.now()));
    if (outcome?.status !== 'extended') throw outcome?.status === 'stale' ? staleReceipt(id) : notFound(id);
    this.timers.extended(id, checked, outcome.reservedUntil);
    return { reservedUntil: outcome.reservedUntil };
  }

  /**
   * Fails a delivery: the task is retried (after `delayMs`, or its backoff) or, out of
   * attempts, dead. The observer counts it under the topic the store answers.
   */
  async nack(id: string, receipt: string, options: NackOptions & { readonly outcome?: string }): Promise<NackResult> {
    validateId(id, this.limits);
    const nackOptions = validateNackOptions(options, this.random(), this.limits);
    const { store, clock, inFlight, observer, events } = this.context;
    const now = clock.now();
    const outcome = await inFlight.track(store.tasks.nack({ id, receipt: validateReceipt(receipt), now, ...nackOptions }));
    const attempt = attemptOfReceipt(receipt);
    const error = nackOptions.error === undefined ? {} : { error: nackOptions.error };
    switch (outcome.status) {
      case 'not_found':
        throw notFound(id);
      case 'stale':
        throw staleReceipt(id);
      case 'dead':
        observer.settled(outcome.topic, 'dead');
        events.emit({ type: 'dead', id, topic: outcome.topic, attempt, at: now, ...error });
        this.flow.settled(outcome.topic, receipt);
        this.timers.remove(id);
        return { state: 'dead' };
      case 'retrying':
        observer.settled(outcome.topic, 'failed');
        events.emit({ type: 'failed', id, topic: outcome.topic, attempt, at: now, nextRunAt: outcome.ref.dueAt, ...error });
        this.flow.settled(outcome.topic, receipt);
        this.timers.move(outcome.ref);
        return { state: 'pending', runAt: outcome.ref.dueAt };
    }
  }

  /**
   * `ack` inside the caller's transaction (the PostgreSQL store): the outcome as the
   * transaction sees it (STALE_RECEIPT, TASK_NOT_FOUND), in effect if and only if it commits.
   * Nothing is counted or forgotten here, since the transaction may still roll back: the
   * reservation's timer finds the task completed when it fires, and a worker that sees its
   * handler's ack committed (`confirmed`) counts it then.
   */
  async ackInTransaction(id: string, receipt: string, tx: SqlTransaction): Promise<void> {
    const transactional = transactionalOf(this.context.store, 'ack');
    validateId(id, this.limits);
    const checked = validateReceipt(receipt);
    const { clock, inFlight } = this.context;
    const outcome = await inFlight.track(transactional.ack(tx, { id, receipt: checked, now: clock.now() }));
    if (outcome.status === 'not_found') throw notFound(id);
    if (outcome.status === 'stale') throw staleReceipt(id);
  }

  /** `nack` inside the caller's transaction, likewise: the retry's timer reaches its shard's owner on commit. */
  async nackInTransaction(id: string, receipt: string, options: NackOptions, tx: SqlTransaction): Promise<NackResult> {
    const transactional = transactionalOf(this.context.store, 'nack');
    validateId(id, this.limits);
    const nackOptions = validateNackOptions(options, this.random(), this.limits);
    const { clock, inFlight } = this.context;
    const outcome = await inFlight.track(transactional.nack(tx, { id, receipt: validateReceipt(receipt), now: clock.now(), ...nackOptions }));
    if (outcome.status === 'dead') return { state: 'dead' };
    if (outcome.status === 'retrying') return { state: 'pending', runAt: outcome.ref.dueAt };
    throw outcome.status === 'stale' ? staleReceipt(id) : notFound(id);
  }

  /**
   * A delivery settled in a transaction of its handler's (a worker's `ctx.ack({ tx })`), once
   * the handler returned: read back, and counted and forgotten as an ack or nack through the
   * pool would have been if the transaction committed. A reservation still as it was (rolled
   * back, or not yet committed) is left to its ttr timer, which `watch` arms: it runs out and
   * the task is delivered again, as the next attempt.
   */
  async confirmed(delivery: Delivery, watch: () => void): Promise<void> {
    const { store, clock, inFlight, observer, events } = this.context;
    const record = await inFlight.track(store.tasks.get(delivery.id));
    if (record === null) return;
    if (record.state === 'reserved' && record.receipt === delivery.receipt) {
      watch();
      return;
    }
    // The attempt's own entry says how it ended; another's (an expiry) was counted where it ran.
    const entry = record.history.findLast((e) => e.attempt === delivery.attempt);
    if (entry === undefined || entry.outcome === 'expired') return;
    const outcome = entry.outcome === 'acked' ? 'acked' : record.state === 'dead' ? 'dead' : 'failed';
    observer.settled(record.topic, outcome);
    const error = outcome === 'acked' || record.lastError === null ? {} : { error: record.lastError };
    const next = outcome === 'failed' ? { nextRunAt: record.runAt } : {};
    events.emit({ type: outcome, id: record.id, topic: record.topic, attempt: delivery.attempt, at: clock.now(), ...error, ...next });
    this.flow.settled(record.topic, delivery.receipt);
    if (record.state === 'completed') this.timers.remove(delivery.id);
  }

  /** A worker's failed handler: `nack` of its delivery. */
  readonly nackDelivery = (delivery: Delivery, error: string, delayMs?: number, outcome?: string): Promise<NackResult> =>
    this.nack(delivery.id, delivery.receipt, { error, ...(delayMs === undefined ? {} : { delayMs }), ...(outcome === undefined ? {} : { outcome }) });
}

/** What the caller hears: an ack sent again after it succeeded is `acked` (acks are idempotent). */
export function publicAckOutcome(outcome: StoreAckOutcome): AckOutcome {
  return outcome.status === 'already_acked' ? 'acked' : outcome.status;
}

function notFound(id: string): DelayQError {
  return new DelayQError('TASK_NOT_FOUND', `task ${id} not found`, { id });
}

function staleReceipt(id: string): DelayQError {
  return new DelayQError('STALE_RECEIPT', `task ${id}: the receipt is not the current reservation`, { id });
}
