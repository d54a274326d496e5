/**
 * Worker: runs a handler on the due tasks of one topic with bounded concurrency, over the
 * queue as a WorkSource (work-source.ts). Each delivery runs as a Job (job.ts).
 */
import { DelayQError } from '../../core/errors.js';
import type { Clock, SqlTransaction } from '../../core/ports/index.js';
import type { Delivery } from '../../core/task/model.js';
import { validateCloseOptions } from '../../core/task/validate.js';
import { handlerTimeout, Job, type Handler, type HandlerSettlement, type HandlerTimeout, type JobOwner } from './job.js';
import { DeferTo, RetryAfter, type Outcome } from './outcomes.js';
import { lapseAt } from './renewer.js';

/** What a worker needs from its queue: reserve with a cancel signal, settle a delivery, renew a reservation. */
export interface WorkSource extends HandlerSettlement {
  reserveFor(topic: string, max: number, signal: AbortSignal, ttrMs: number | undefined): Promise<Delivery[]>;
  /**
   * Acks (outcome ok) or fails the delivery of `job`. Never rejects: a settlement that
   * cannot reach the store is reported and leaves the reservation to its TTR.
   */
  settle(job: Job, outcome: Outcome): Promise<unknown>;
  /**
   * Acks the deliveries of handlers that succeeded, in one store call where the store
   * takes several. Never rejects, like `settle`.
   */
  ackAll(jobs: readonly Job[]): Promise<unknown>;
  reportError(error: unknown, context: string): void;
  /** Arms the TTR timer of a delivery whose handler is still running. */
  watch(delivery: Delivery): void;
  /** Runs `callback` on a later turn of the event loop (after the handlers' own microtasks). */
  defer(callback: () => void): void;
  /** Waits before reserving again after a failed reserve (the queue's storeRetryMs, on its clock). */
  pauseAfterFailure(): Promise<void>;
  /** The queue's clock: handlers' deadlines, and how long close() waits. */
  readonly clock: Clock;
  /** Keeps `job`'s reservation renewed while its handler runs (renewer.ts), until `drop`. */
  hold(job: Job): void;
  drop(job: Job): void;
  /** After the handler of a job it settled in a transaction returned: whether that committed (Settlements.confirmed). Never rejects. */
  confirm(job: Job): Promise<unknown>;
}

/** How a Worker batches its store calls. */
export interface WorkerOptions {
  /**
   * Gather the handlers that end during one turn of the event loop (each in its own I/O
   * callback, as HTTP responses arrive), then ack them in one call and refill the slots
   * they freed with one reserve, at the end of that turn (setImmediate). Without it each
   * such handler costs a reserve of one task and an ack call of its own. The Pusher's
   * workers gather (ADR 0029); `work` handlers, mostly synchronous or ending together
   * after one reserve, need not.
   */
  readonly gather?: boolean;
  /**
   * Something scarcer than the worker's own slots that each handler needs (the Pusher's
   * share of the process's push slots, engine/push/push-slots.ts): the worker reserves no more
   * tasks than `available()`, and with none waits in `wait` instead of reserving, so that a
   * task it could not start stays pending in the store, in its order.
   */
  readonly room?: Room;
}

/** A worker's own: the topic it works on, its handler, its slots and its reservation length. */
export interface WorkerParams extends WorkerOptions {
  readonly topic: string;
  readonly handler: Handler;
  /** Handlers running at once. */
  readonly concurrency: number;
  /** Reservation length of its deliveries; undefined: each task's ttrMs. */
  readonly ttrMs: number | undefined;
  /** Each handler's time limit; undefined: none. */
  readonly timeoutMs?: HandlerTimeout | undefined;
}

export interface Room {
  /** How many more handlers could start now. */
  available(): number;
  /** Resolves once available() may be above 0 again, or when `signal` aborts. */
  wait(signal: AbortSignal): Promise<void>;
}

export interface WorkOptions {
  /** Handlers running at once. Default 10. */
  concurrency?: number;
  /** Reservation length for this worker's deliveries; default: each task's ttrMs. */
  ttrMs?: number;
  /**
   * The most a handler may run (its reservation renewed all the while): then its signal
   * aborts (HANDLER_TIMEOUT) and the attempt fails as `timeout`, retried after its backoff.
   * A number of ms, or a function of the delivery giving one per task (undefined: none).
   * Default: none, renewed for as long as the handler runs.
   */
  timeoutMs?: HandlerTimeout;
}

export interface WorkerCloseOptions {
  /**
   * Wait at most this long for running handlers; then each one still running is told to
   * stop (its signal aborts with WORKER_CLOSED) and its reservation given back uncounted, due
   * again at once for another consumer. Default: wait for every handler.
   */
  timeoutMs?: number | undefined;
}

/**
 * Runs `handler` on the due tasks of one topic with bounded concurrency: it reserves as
 * many tasks as it has free slots, in one reserve call, and starts each handler at once. A
 * handler that resolves acks its task; one that throws fails it (retry with backoff, or
 * dead after maxAttempts).
 */
export class Worker implements JobOwner {
  private readonly abort = new AbortController();
  /** Handlers running now. */
  private active = 0;
  /** Acks and nacks on their way to the store (their handlers have returned). */
  private settling = 0;
  // Bound once: a settlement costs one promise, not a closure of its own.
  private readonly onSettled = (): void => {
    this.settling--;
    this.notify();
  };
  /** Handlers that succeeded since the last flush: their acks go to the store together. */
  private succeeded: Job[] = [];
  private flushQueued = false;
  // Runs as a microtask, so the handlers started from one reserve (and quick async ones)
  // share one ack call instead of one store call and three promises each.
  private readonly flushAcks = (): void => {
    this.flushQueued = false;
    const jobs = this.succeeded;
    this.succeeded = [];
    void this.source.ackAll(jobs).then(() => {
      this.settling -= jobs.length;
      for (const job of jobs) if (job.watched) this.source.drop(job);
      this.notify();
    });
  };
  private wake: (() => void) | null = null;
  private readonly loop: Promise<void>;
  /** Whether handlers that end are gathered until the end of the event loop's turn (WorkerOptions.gather). */
  private readonly gather: boolean;
  private readonly room: Room | undefined;
  private turnQueued = false;
  // The end of a turn (gather): the acks of every handler that ended in it go in one call,
  // and the slots they freed are refilled by one reserve.
  private readonly endTurn = (): void => {
    this.turnQueued = false;
    if (this.succeeded.length > 0) this.flushAcks();
    this.notify();
  };

  readonly topic: string;
  private readonly handler: Handler;
  private readonly concurrency: number;
  readonly ttrMs: number | undefined;
  private readonly timeoutMs: HandlerTimeout | undefined;
  /** Jobs whose handlers ran past their first turn: renewed, and given back should close stop waiting. */
  private readonly lingering = new Set<Job>();
  /** close() stopped waiting for the handlers still running. */
  private gaveUp = false;

  /** Starts reserving at once; `source` is the queue as the worker sees it. */
  constructor(
    private readonly source: WorkSource,
    params: WorkerParams,
  ) {
    ({ topic: this.topic, handler: this.handler, concurrency: this.concurrency, ttrMs: this.ttrMs, timeoutMs: this.timeoutMs } = params);
    this.gather = params.gather ?? false;
    this.room = params.room;
    this.loop = this.run();
  }

  /** Handlers running now. */
  get running(): number {
    return this.active;
  }

  /**
   * Stops taking tasks and resolves once the handlers already running have settled, or, with
   * `timeoutMs`, once that has passed and the reservations of those still running were given
   * back (their signals abort with WORKER_CLOSED; they are not waited for).
   */
  async close(options?: WorkerCloseOptions): Promise<void> {
    const { timeoutMs } = validateCloseOptions(options);
    this.abort.abort();
    this.notify();
    await this.loop;
    const { clock } = this.source;
    const timer = timeoutMs === undefined ? null : clock.setTimer(() => this.giveUp(), timeoutMs);
    try {
      while ((this.active > 0 && !this.gaveUp) || this.settling > 0) await new Promise<void>((resolve) => (this.wake = resolve));
    } finally {
      if (timer !== null) clock.clearTimer(timer);
    }
  }

  /** close() waited long enough: each handler still running is told to stop, its reservation given back uncounted. */
  private giveUp(): void {
    this.gaveUp = true;
    for (const job of [...this.lingering]) {
      if (job.done || job.settledEarly) continue;
      this.settleEarly(job, new DelayQError('WORKER_CLOSED', `worker ${this.topic}: closed before the handler of ${job.id} ended; its reservation was given back`, { id: job.id }), {
        ok: false,
        error: new DeferTo('worker closed: the reservation was given back', job.delivery.runAt),
      });
    }
    this.notify();
  }

  /** The Renewer: `job`'s reservation was lost. Its handler is told; what it settles later, the store judges. */
  lost(job: Job, why: 'refused' | 'lapsed', at: number): void {
    if (job.done || job.aborted !== null) return;
    this.source.drop(job);
    const cause = why === 'refused' ? 'the store refused to renew it' : 'it was not renewed in time';
    // `lostAt`: when it counts as lost (its lapse; the store's refusal); the abort event may come later on a busy or frozen process.
    job.abort(new DelayQError('RESERVATION_LOST', `task ${job.id}: the reservation was lost (${cause}); it may be delivered again elsewhere`, { id: job.id, why, lostAt: at }));
    this.source.reportError(job.aborted, `worker ${this.topic}: a running handler's reservation was lost`);
  }

  /** The Renewer or the signal: `job`'s handler ran past its timeoutMs; the attempt fails as `timeout`. */
  timedOut(job: Job): void {
    if (job.done || job.settledEarly) return;
    const after = job.timeoutAt - (job.until - job.length);
    const message = `handler timed out (timeoutMs, about ${Math.round(after)} ms)`;
    this.settleEarly(job, new DelayQError('HANDLER_TIMEOUT', `task ${job.id}: ${message}`, { id: job.id }), { ok: false, error: new RetryAfter(message, null, 'timeout') });
  }

  /** The deadlines of `job` checked when its handler reads its signal (Job.signal). */
  checkDeadlines(job: Job): void {
    if (job.done || job.settledEarly) return;
    const now = this.source.clock.now();
    if (now >= job.timeoutAt) this.timedOut(job);
    else if (job.aborted === null && now >= lapseAt(job)) this.lost(job, 'lapsed', lapseAt(job));
  }

  /**
   * The handler settles its delivery itself: the worker's own settlement, and the renewal of
   * its reservation, end here (a transaction's holds the task's row until it ends).
   */
  settleFromHandler<T>(job: Job, tx: SqlTransaction | undefined, settle: (source: HandlerSettlement) => Promise<T>): Promise<T> {
    if (job.done || job.settledEarly || job.settledBy !== null) return settle(this.source);
    job.settledBy = tx === undefined ? 'now' : 'tx';
    // In a transaction, renewing would wait on the row it holds; at once, the reservation is
    // renewed until the store answered, so a slow ack does not outlive it.
    if (tx !== undefined) {
      this.source.drop(job);
      return settle(this.source);
    }
    return settle(this.source).finally(() => this.source.drop(job));
  }

  /** Tells `job`'s handler to stop and settles its delivery now, without waiting for the handler. */
  private settleEarly(job: Job, reason: DelayQError, outcome: Outcome): void {
    job.settledEarly = true;
    this.source.drop(job);
    job.abort(reason);
    this.settling++;
    void this.source.settle(job, outcome).then(this.onSettled);
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      // A slot is free once its handler returns. Acks in flight are bounded apart
      // (SETTLEMENTS_PER_SLOT): enough to keep a remote store's round trips overlapped
      // through a burst, few enough that a slow store holds the worker back (ADR 0008).
      let free = this.concurrency - this.active;
      if (free === 0 || this.settling >= this.concurrency * SETTLEMENTS_PER_SLOT) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }
      if (this.room !== undefined) {
        const room = this.room.available();
        if (room === 0) {
          await this.room.wait(signal);
          continue;
        }
        free = Math.min(free, room);
      }
      let deliveries: Delivery[];
      try {
        deliveries = await this.source.reserveFor(this.topic, free, signal, this.ttrMs);
      } catch (error) {
        if (signal.aborted) break;
        this.source.reportError(error, `worker ${this.topic}: reserve failed`);
        await this.source.pauseAfterFailure();
        continue;
      }
      // Nothing comes back only when the worker or its queue is closing.
      if (deliveries.length === 0) break;
      const now = this.source.clock.now();
      const jobs = deliveries.map((delivery) => this.start(delivery, now));
      // Handlers still running on the next turn get their TTR timers and are renewed; quick ones never need either.
      this.source.defer(() => {
        for (const job of jobs) {
          if (job.done || job.watched) continue;
          job.watched = true;
          this.source.watch(job.delivery);
          if (job.settledEarly || job.aborted !== null) continue;
          this.lingering.add(job);
          this.source.hold(job);
        }
      });
    }
  }

  /** Runs the handler at once; a synchronous handler costs no promise of its own. */
  private start(delivery: Delivery, now: number): Job {
    let timeoutAt = Infinity;
    if (this.timeoutMs !== undefined) {
      try {
        timeoutAt = now + handlerTimeout(this.timeoutMs, delivery);
      } catch (error) {
        // A timeoutMs function that answered nonsense fails the attempt before the handler runs.
        const job = new Job(delivery, this, Infinity, now);
        this.active++;
        this.finish(job, { ok: false, error });
        return job;
      }
    }
    const job = new Job(delivery, this, timeoutAt, now);
    this.active++;
    let result: unknown;
    try {
      result = this.handler(delivery, job);
    } catch (error) {
      this.finish(job, { ok: false, error });
      return job;
    }
    if (isThenable(result)) {
      result.then(
        () => this.finish(job, OK),
        (error: unknown) => this.finish(job, { ok: false, error }),
      );
    } else {
      this.finish(job, OK);
    }
    return job;
  }

  private finish(job: Job, outcome: Outcome): void {
    job.done = true;
    this.active--;
    // Still renewed until its settlement is answered (the callbacks below drop it): an ack in
    // flight on a slow store must not outlive the reservation it settles.
    if (job.watched) this.lingering.delete(job);
    // Settled already (timed out, given back at close, or by the handler at once): only its slot is freed.
    if (job.settledEarly || job.settledBy === 'now') {
      this.notify();
      return;
    }
    // Settled by the handler in its transaction: whether that committed is read back, nothing sent.
    if (job.settledBy === 'tx') {
      this.settling++;
      void this.source.confirm(job).then(this.onSettled);
      this.notify();
      return;
    }
    this.settling++;
    if (!outcome.ok)
      void this.source.settle(job, outcome).then(() => {
        if (job.watched) this.source.drop(job);
        this.onSettled();
      });
    if (this.gather) {
      if (outcome.ok) this.succeeded.push(job);
      if (!this.turnQueued) {
        this.turnQueued = true;
        // A yield, not a timer: it runs after this turn's I/O callbacks whatever the clock.
        setImmediate(this.endTurn);
      }
      return;
    }
    if (outcome.ok) {
      this.succeeded.push(job);
      if (!this.flushQueued) {
        this.flushQueued = true;
        queueMicrotask(this.flushAcks);
      }
    }
    this.notify();
  }
}

const OK: Outcome = { ok: true };

/** Acks in flight per unit of concurrency before the worker stops asking (ADR 0008). */
const SETTLEMENTS_PER_SLOT = 32;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
