import { attemptOfReceipt } from '../../core/events.js';
import type { QueueObserver } from '../../core/observer.js';
import { EXPIRED_ERROR } from '../../core/task/decide.js';
import type { ConsumerStore } from '../../core/ports/index.js';
import type { TimerRef } from '../../core/task/model.js';
import type { LoopContext } from '../loop-context.js';
import { RetryingLoop } from '../retry-timers.js';

/**
 * Expires reservations that ran out (asynq's recoverer). A reservation's 'ttr' timer fires
 * here when it was neither acked nor nacked in time: the store moves the task back to
 * pending, due at once (its new run timer is placed like any other), or, on its last
 * attempt, to dead. The store refuses a reservation settled meanwhile (`stale`), so a
 * timer that lost the race with an ack does nothing. One extended since its timer was set
 * (a worker renewing it, an `extend` through any process) is `held`: its timer is placed
 * again at the reservation's new end, so whoever holds the timer (this process, or the
 * owner of the task's shard) still expires it should its holder stop renewing.
 *
 * A store call that fails is made again after `storeRetryMs`, until it gets an answer or
 * the queue stops: a reservation that ran out must not stay reserved until a restart.
 */
export class Expirer extends RetryingLoop {
  private readonly store: Pick<ConsumerStore, 'expire'>;
  private readonly observer: QueueObserver;
  private readonly events: LoopContext['events'];
  /** Where the run timer of a task to retry goes. */
  private readonly place: (ref: TimerRef) => void;

  constructor(context: LoopContext, { place }: { place: (ref: TimerRef) => void }) {
    super(context);
    this.store = context.store.tasks;
    this.observer = context.observer;
    this.events = context.events;
    this.place = place;
  }

  expire(ref: TimerRef): void {
    if (!this.running || ref.receipt === null) return;
    const now = this.clock.now();
    const attempt = attemptOfReceipt(ref.receipt);
    const expiry = this.inFlight.track(this.store.expire(ref.id, ref.receipt, now)).then(
      (outcome) => {
        if (outcome.status === 'held') {
          this.place(outcome.ref);
          return;
        }
        if (outcome.status === 'retrying') {
          this.place(outcome.ref);
          // The store's topic: the timer's is the task's lane (its topic's push lane for a task with its own url).
          this.observer.settled(outcome.topic, 'failed');
          this.events.emit({ type: 'failed', id: ref.id, topic: outcome.topic, attempt, at: now, nextRunAt: outcome.ref.dueAt, error: EXPIRED_ERROR });
        }
        if (outcome.status === 'dead') {
          this.observer.settled(outcome.topic, 'dead');
          this.events.emit({ type: 'dead', id: ref.id, topic: outcome.topic, attempt, at: now, error: EXPIRED_ERROR });
        }
        if (outcome.status === 'dead') this.logger.warn({ id: ref.id }, 'reservation expired on the last attempt; task is dead');
      },
      (error: unknown) => {
        this.logger.error({ err: error, id: ref.id }, 'expiring a reservation failed; will retry');
        if (this.running) this.retries.later(() => this.expire(ref));
      },
    );
    void expiry;
  }
}
