import type { Delivery } from '../core/task/model.js';

/** What a worker needs from its queue: reserve with a cancel signal, settle a delivery. */
export interface WorkSource {
  reserveFor(topic: string, max: number, signal: AbortSignal, ttrMs: number | undefined): Promise<Delivery[]>;
  /** `watched`: the delivery's TTR timer was armed (see `watch`). */
  settle(delivery: Delivery, outcome: { ok: true } | { ok: false; error: unknown }, watched: boolean): Promise<void>;
  /** Arms the TTR timer of a delivery whose handler is still running. */
  watch(delivery: Delivery): void;
  /** Runs `callback` on a later turn of the event loop (after the handlers' own microtasks). */
  defer(callback: () => void): void;
  reportError(error: unknown, context: string): void;
  /** Waits on the queue's clock (a manual clock in tests). */
  pause(ms: number): Promise<void>;
}

interface Job {
  readonly delivery: Delivery;
  watched: boolean;
  done: boolean;
}

export type Handler<P = unknown> = (delivery: Delivery<P>) => unknown;

export interface WorkOptions {
  /** Handlers running at once. Default 10. */
  concurrency?: number;
  /** Reservation length for this worker's deliveries; default: each task's ttrMs. */
  ttrMs?: number;
}

/**
 * Runs `handler` on the due tasks of one topic with bounded concurrency: it reserves as
 * many tasks as it has free slots, in one claim, and starts each handler at once. A
 * handler that resolves acks its task; one that throws fails it (retry with backoff, or
 * dead after maxAttempts).
 */
export class Worker {
  private readonly abort = new AbortController();
  /** Running handlers; the flag says whether the delivery's TTR timer has been armed. */
  private readonly inFlight = new Map<Promise<void>, Job>();
  private slotFreed: (() => void) | null = null;
  private readonly loop: Promise<void>;

  constructor(
    readonly topic: string,
    private readonly handler: Handler,
    private readonly source: WorkSource,
    private readonly concurrency: number,
    private readonly ttrMs: number | undefined,
  ) {
    this.loop = this.run();
  }

  /** Handlers running now. */
  get running(): number {
    return this.inFlight.size;
  }

  /** Stops taking tasks and resolves once the handlers already running have settled. */
  async close(): Promise<void> {
    this.abort.abort();
    this.slotFreed?.();
    await this.loop;
    await Promise.all(this.inFlight.keys());
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      const free = this.concurrency - this.inFlight.size;
      if (free === 0) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        this.slotFreed = null;
        continue;
      }
      let deliveries: Delivery[];
      try {
        deliveries = await this.source.reserveFor(this.topic, free, signal, this.ttrMs);
      } catch (error) {
        if (signal.aborted) break;
        this.source.reportError(error, `worker ${this.topic}: reserve failed`);
        await this.source.pause(1_000);
        continue;
      }
      if (deliveries.length === 0) continue;
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

  private start(delivery: Delivery): Job {
    const job: Job = { delivery, watched: false, done: false };
    const promise = this.execute(job).finally(() => {
      job.done = true;
      this.inFlight.delete(promise);
      this.slotFreed?.();
    });
    this.inFlight.set(promise, job);
    return job;
  }

  private async execute(job: Job): Promise<void> {
    const delivery = job.delivery;
    let outcome: { ok: true } | { ok: false; error: unknown };
    try {
      await this.handler(delivery);
      outcome = { ok: true };
    } catch (error) {
      outcome = { ok: false, error };
    }
    try {
      await this.source.settle(delivery, outcome, job.watched);
    } catch (error) {
      // The reservation stays; its TTR runs out and the task is delivered again.
      this.source.reportError(error, `worker ${this.topic}: settling ${delivery.id} failed`);
    }
  }
}
