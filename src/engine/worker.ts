import type { Delivery } from '../core/task/model.js';

/** What a worker needs from its queue: reserve with a cancel signal, settle a delivery. */
export interface WorkSource {
  reserveFor(topic: string, max: number, signal: AbortSignal, ttrMs: number | undefined): Promise<Delivery[]>;
  settle(delivery: Delivery, outcome: { ok: true } | { ok: false; error: unknown }): Promise<void>;
  reportError(error: unknown, context: string): void;
  /** Waits on the queue's clock (a manual clock in tests). */
  pause(ms: number): Promise<void>;
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
  private readonly inFlight = new Set<Promise<void>>();
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
    await Promise.all(this.inFlight);
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
      for (const delivery of deliveries) this.start(delivery);
    }
  }

  private start(delivery: Delivery): void {
    const job = this.execute(delivery).finally(() => {
      this.inFlight.delete(job);
      this.slotFreed?.();
    });
    this.inFlight.add(job);
  }

  private async execute(delivery: Delivery): Promise<void> {
    let outcome: { ok: true } | { ok: false; error: unknown };
    try {
      await this.handler(delivery);
      outcome = { ok: true };
    } catch (error) {
      outcome = { ok: false, error };
    }
    try {
      await this.source.settle(delivery, outcome);
    } catch (error) {
      // The reservation stays; its TTR runs out and the task is delivered again.
      this.source.reportError(error, `worker ${this.topic}: settling ${delivery.id} failed`);
    }
  }
}
