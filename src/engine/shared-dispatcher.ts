import type { Clock, SharedDispatch } from '../core/ports/index.js';
import type { Delivery, TimerRef } from '../core/task/model.js';
import type { Deliver, Dispatcher } from './dispatcher.js';
import type { InFlight } from './in-flight.js';
import type { LoopContext } from './loop-context.js';
import { Promoter } from './promoter.js';

/**
 * Dispatch through a store that several processes share (see Dispatcher and the store
 * port's SharedDispatch): due run timers go to the Promoter, which moves their tasks into
 * the store's ready lists, and consumers reserve from those lists. The store also hands
 * this process timers it did not create (tasks other processes scheduled into partitions
 * it owns, partitions it takes over): they go to `placeRemote`, like loaded timers.
 */
export class SharedDispatcher implements Dispatcher {
  private running = false;
  private readonly store: SharedDispatch;
  private readonly clock: Clock;
  private readonly inFlight: InFlight;
  private readonly promoter: Promoter;
  private readonly placeRemote: (ref: TimerRef) => void;

  /** `shared`: the store's shared part (`store.shared`); `placeRemote`: where timers other processes hand over go. */
  constructor(context: LoopContext, { shared, placeRemote }: { shared: SharedDispatch; placeRemote: (ref: TimerRef) => void }) {
    ({ clock: this.clock, inFlight: this.inFlight } = context);
    this.store = shared;
    this.promoter = new Promoter(context, { shared });
    this.placeRemote = placeRemote;
  }

  start(): void {
    this.running = true;
    this.promoter.start();
    this.store.onRemoteTimer(this.placeRemote);
  }

  dispatch(due: readonly TimerRef[]): void {
    this.promoter.promote(due.filter((ref) => ref.kind === 'run'));
  }

  async reserve(topic: string, max: number, signal: AbortSignal, ttrMs: number | undefined, deliver: Deliver): Promise<Delivery[]> {
    if (!this.running) return [];
    const reserved = await this.inFlight.track(this.store.reserveReady(topic, max, () => this.clock.now(), ttrMs, signal));
    const now = this.clock.now();
    return reserved.map((record) => deliver(record, now));
  }

  /** The ready lists are in the store, shared: nothing waits here to hold the loader back. */
  whenBacklogAtMost(): Promise<void> {
    return Promise.resolve();
  }

  oldestReadyByTopic(): Readonly<Record<string, number>> {
    return {};
  }

  backlogByTopic(): Readonly<Record<string, number>> {
    return {};
  }

  stop(): void {
    this.running = false;
    this.promoter.stop();
  }
}
