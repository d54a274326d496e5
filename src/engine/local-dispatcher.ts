import type { Clock, ConsumerStore } from '../core/ports/index.js';
import type { Delivery, ReservedTask, TimerRef } from '../core/task/model.js';
import type { Deliver, Dispatcher } from './dispatcher.js';
import type { InFlight } from './in-flight.js';
import type { LoopContext } from './loop-context.js';
import { ReadyQueue } from './ready-queue.js';

/**
 * Dispatch within one process (see Dispatcher): due run timers wait in the ReadyQueue,
 * and a consumer dequeues them and reserves them in the store. Refs the store refuses
 * (cancelled, moved, reserved already) are dropped and the loop goes on, so a stale hint
 * never reaches a consumer.
 */
export class LocalDispatcher implements Dispatcher {
  private readonly ready = new ReadyQueue();
  private running = false;

  private readonly store: Pick<ConsumerStore, 'reserve' | 'reserveRefs'>;
  private readonly clock: Clock;
  private readonly inFlight: InFlight;

  constructor(context: Pick<LoopContext, 'store' | 'clock' | 'inFlight'>) {
    ({ store: this.store, clock: this.clock, inFlight: this.inFlight } = context);
  }

  start(): void {
    this.running = true;
  }

  dispatch(due: readonly TimerRef[]): void {
    for (const ref of due) if (ref.kind === 'run') this.ready.push(ref.topic, ref);
  }

  async reserve(topic: string, max: number, signal: AbortSignal, ttrMs: number | undefined, deliver: Deliver): Promise<Delivery[]> {
    for (;;) {
      if (!this.running) return [];
      const items = this.ready.dequeue(topic, max);
      if (items.length > 0) {
        const now = this.clock.now();
        const store = this.store;
        let reserved: ReservedTask[];
        try {
          reserved = await this.inFlight.track(
            store.reserveRefs(items, now, ttrMs),
          );
        } catch (error) {
          // Nothing was reserved, and these tasks are still pending and due in the store: put
          // them back, or no one would deliver them before a restart reloads them.
          if (this.running) for (const item of items) this.ready.push(topic, item);
          throw error;
        }
        if (reserved.length > 0) return reserved.map((record) => deliver(record, now));
        continue;
      }
      if (signal.aborted) return [];
      await this.ready.waitFor(topic, signal);
    }
  }

  whenBacklogAtMost(level: number): Promise<void> {
    return this.ready.whenBacklogAtMost(level);
  }

  backlogByTopic(): Readonly<Record<string, number>> {
    return this.ready.backlogByTopic();
  }

  oldestReadyByTopic(): Readonly<Record<string, number>> {
    return this.ready.oldestByTopic();
  }

  stop(): void {
    this.running = false;
    this.ready.releaseAll();
  }
}
