import type { Delivery } from '../core/task/model.js';

/** What a worker needs from its queue: reserve with a cancel signal, settle a delivery. */
export interface WorkSource {
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
}

export type Outcome = { readonly ok: true } | { readonly ok: false; readonly error: unknown };

export interface Job {
  readonly delivery: Delivery;
  watched: boolean;
  done: boolean;
}

export type Handler<P = unknown> = (delivery: Delivery<P>) => unknown;

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
   * share of the process's push slots, engine/push-slots.ts): the worker reserves no more
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
}

/**
 * Runs `handler` on the due tasks of one topic with bounded concurrency: it reserves as
 * many tasks as it has free slots, in one reserve call, and starts each handler at once. A
 * handler that resolves acks its task; one that throws fails it (retry with backoff, or
 * dead after maxAttempts).
 */
export class Worker {
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
  private readonly ttrMs: number | undefined;

  /** Starts reserving at once; `source` is the queue as the worker sees it. */
  constructor(
    private readonly source: WorkSource,
    params: WorkerParams,
  ) {
    ({ topic: this.topic, handler: this.handler, concurrency: this.concurrency, ttrMs: this.ttrMs } = params);
    this.gather = params.gather ?? false;
    this.room = params.room;
    this.loop = this.run();
  }

  /** Handlers running now. */
  get running(): number {
    return this.active;
  }

  /** Stops taking tasks and resolves once the handlers already running have settled. */
  async close(): Promise<void> {
    this.abort.abort();
    this.notify();
    await this.loop;
    while (this.active > 0 || this.settling > 0) await new Promise<void>((resolve) => (this.wake = resolve));
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
      const jobs = deliveries.map((delivery) => this.start(delivery));
      // Handlers still running on the next turn get their TTR timers; quick ones never need one.
      this.source.defer(() => {
        for (const job of jobs) {
          if (job.done || job.watched) continue;
          job.watched = true;
          this.source.watch(job.delivery);
        }
      });
    }
  }

  /** Runs the handler at once; a synchronous handler costs no promise of its own. */
  private start(delivery: Delivery): Job {
    const job: Job = { delivery, watched: false, done: false };
    this.active++;
    let result: unknown;
    try {
      result = this.handler(delivery);
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
    this.settling++;
    if (!outcome.ok) void this.source.settle(job, outcome).then(this.onSettled);
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
