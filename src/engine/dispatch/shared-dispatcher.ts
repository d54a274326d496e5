import type { Clock, RemoteTimerSource, SharedDispatch } from '../../core/ports/index.js';
import { topicOfLane, type Delivery, type TimerRef } from '../../core/task/model.js';
import type { InFlight } from '../in-flight.js';
import type { LoopContext } from '../loop-context.js';
import { Promoter } from './promoter.js';
import { deliverAll, handOutOrGiveBack, type Deliver, type Dispatcher, type GiveBack } from './dispatcher.js';
import type { DeliveryGate } from '../topics/delivery-gate.js';
import type { FlowTicket, FlowControl } from '../topics/flow-control.js';
import type { TopicGate } from '../topics/topic-pauses.js';

/**
 * Dispatch through a store that several processes share (see Dispatcher and the store
 * port's SharedDispatch): due run timers go to the Promoter, which moves their tasks into
 * the store's ready lists, and consumers reserve from those lists. The store also hands
 * this process timers it did not create (tasks other processes scheduled into partitions
 * it owns, partitions it takes over): they go to `placeRemote`, with where each came from
 * (read from the store, or told by another process's message: notice-timers.ts). A
 * paused topic's tasks are promoted as usual and wait in the ready lists; its reserves wait
 * here until it is resumed (TopicGate). `topic` here is a lane: a topic, or a topic's push
 * lane, which that topic's pause and limits govern.
 */
export class SharedDispatcher implements Dispatcher {
  private running = false;
  private readonly store: SharedDispatch;
  private readonly clock: Clock;
  private readonly inFlight: InFlight;
  private readonly promoter: Promoter;
  private readonly placeRemote: (ref: TimerRef, source: RemoteTimerSource) => void;
  private readonly pauses: TopicGate;
  private readonly flow: FlowControl;
  private readonly gate: DeliveryGate;
  private readonly giveBack: GiveBack;

  /**
   * `shared`: the store's coordination part (`store.coordination`); `placeRemote`: where timers other
   * processes hand over go; `pauses`: the paused topics; `flow`: the topics' limits; `gate`:
   * the check at hand-out, and `giveBack` for what it turns back (delivery-gate.ts).
   */
  constructor(
    context: LoopContext,
    { shared, placeRemote, pauses, flow, gate, giveBack }: { shared: SharedDispatch; placeRemote: (ref: TimerRef, source: RemoteTimerSource) => void; pauses: TopicGate; flow: FlowControl; gate: DeliveryGate; giveBack: GiveBack },
  ) {
    ({ clock: this.clock, inFlight: this.inFlight } = context);
    this.store = shared;
    this.pauses = pauses;
    this.flow = flow;
    this.gate = gate;
    this.giveBack = giveBack;
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

  async reserve(lane: string, max: number, signal: AbortSignal, ttrMs: number | undefined, deliver: Deliver): Promise<Delivery[]> {
    const topic = topicOfLane(lane);
    for (;;) {
      if (!this.running) return [];
      // The rules this reserve goes by; checked again before its tasks are handed out.
      const token = this.gate.tokenOf(topic);
      if (this.pauses.has(topic)) {
        // Paused: promotion goes on, and the topic's ready list waits in the store until resumed.
        if (signal.aborted) return [];
        await this.pauses.whenResumed(topic, signal);
        continue;
      }
      // A limited topic reserves no more than its limits admit, and holds the admission a
      // short while (flow-control.ts); what it held back stays in the ready lists, in order.
      let ticket: FlowTicket | null = null;
      if (this.flow.limitsOf(topic) !== undefined) {
        ticket = await this.flow.admit(topic, max, signal);
        if (ticket === null) {
          if (signal.aborted || !this.running) return [];
          continue;
        }
      }
      const hold = ticket === null ? null : this.flow.holdSignal(signal);
      // A pause learnt while this waits in the store cuts the wait; the reserve then holds above.
      const cut = this.pauses.cutOnPause(topic, hold?.signal ?? signal);
      let reserved;
      try {
        reserved = await this.inFlight.track(this.store.reserveReady(lane, ticket?.granted ?? max, () => this.clock.now(), ttrMs, cut.signal, ticket !== null));
      } catch (error) {
        if (ticket !== null) await this.flow.bind(ticket, []);
        throw error;
      } finally {
        cut.release();
        hold?.release();
      }
      // A pause or limits set meanwhile (through any process) hold for these too: given back, and the reserve starts over.
      if (reserved.length > 0 && (await handOutOrGiveBack(this.gate, topic, token, reserved, this.giveBack)) === null) {
        if (ticket !== null) await this.flow.bind(ticket, []);
        continue;
      }
      if (ticket !== null) await this.flow.bind(ticket, reserved);
      if (reserved.length > 0 || signal.aborted || (ticket === null && !this.pauses.has(topic))) {
        const now = this.clock.now();
        return deliverAll(reserved, now, deliver);
      }
    }
  }

  /** Nothing waits here: the store's reservations skip what a purge deleted (its ready lists are hints too). */
  forget(): void {
    // Nothing waits here.
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
