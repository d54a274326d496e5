import { dict } from '../../core/dict.js';
import type { Clock, ConsumerStore } from '../../core/ports/index.js';
import { topicOfLane, type Delivery, type ReservedTask, type TimerRef } from '../../core/task/model.js';
import { deliverAll, handOutOrGiveBack, type Deliver, type Dispatcher, type GiveBack } from './dispatcher.js';
import type { DeliveryGate } from '../topics/delivery-gate.js';
import type { InFlight } from '../in-flight.js';
import type { LoopContext } from '../loop-context.js';
import { ReadyQueue } from './ready-queue.js';
import type { FlowTicket, FlowControl } from '../topics/flow-control.js';
import type { TopicGate } from '../topics/topic-pauses.js';

/**
 * Dispatch within one process (see Dispatcher): due run timers wait in the ReadyQueue,
 * and a consumer dequeues them and reserves them in the store. Refs the store refuses
 * (cancelled, moved, reserved already) are dropped and the loop goes on, so a stale hint
 * never reaches a consumer. A paused topic's due tasks stay in the ReadyQueue, in the order
 * they fell due, and its reserves wait until it is resumed (TopicGate). A reserve names a
 * lane: a topic, or a topic's push lane, which that topic's pause and limits govern.
 */
export class LocalDispatcher implements Dispatcher {
  private readonly ready = new ReadyQueue();
  private running = false;

  private readonly store: Pick<ConsumerStore, 'reserve' | 'reserveRefs'>;
  private readonly clock: Clock;
  private readonly inFlight: InFlight;

  private readonly pauses: TopicGate;
  private readonly flow: FlowControl;
  private readonly gate: DeliveryGate;
  private readonly giveBack: GiveBack;

  /**
   * `pauses`: the paused topics, whose due tasks stay here until resumed; `flow`: the topics'
   * limits; `gate` and `giveBack`: the check at hand-out (delivery-gate.ts).
   */
  constructor(
    context: Pick<LoopContext, 'store' | 'clock' | 'inFlight'>,
    { pauses, flow, gate, giveBack }: { pauses: TopicGate; flow: FlowControl; gate: DeliveryGate; giveBack: GiveBack },
  ) {
    ({ store: { tasks: this.store }, clock: this.clock, inFlight: this.inFlight } = context);
    this.pauses = pauses;
    this.flow = flow;
    this.gate = gate;
    this.giveBack = giveBack;
  }

  start(): void {
    this.running = true;
  }

  dispatch(due: readonly TimerRef[]): void {
    for (const ref of due) if (ref.kind === 'run') this.ready.push(ref.topic, ref);
  }

  async reserve(lane: string, max: number, signal: AbortSignal, ttrMs: number | undefined, deliver: Deliver): Promise<Delivery[]> {
    const topic = topicOfLane(lane);
    for (;;) {
      if (!this.running) return [];
      // The rules this reserve goes by; checked again before its tasks are handed out.
      const token = this.gate.tokenOf(topic);
      if (this.pauses.has(topic)) {
        // Paused: the topic's due tasks stay in the ready queue, in order, until resumed.
        if (signal.aborted) return [];
        await this.pauses.whenResumed(topic, signal);
        continue;
      }
      // A limited topic takes from the ready queue only what its limits admit (flow-control.ts);
      // the rest stays there, in order.
      let ticket: FlowTicket | null = null;
      if (this.flow.limitsOf(topic) !== undefined && this.ready.sizeOf(lane) > 0) {
        ticket = await this.flow.admit(topic, Math.min(max, this.ready.sizeOf(lane)), signal);
        if (ticket === null) {
          if (signal.aborted || !this.running) return [];
          continue;
        }
      }
      const items = this.ready.dequeue(lane, ticket?.granted ?? max);
      if (items.length > 0) {
        const now = this.clock.now();
        const store = this.store;
        let reserved: ReservedTask[];
        try {
          reserved = await this.inFlight.track(store.reserveRefs(items, now, ttrMs));
        } catch (error) {
          // Nothing was reserved, and these tasks are still pending and due in the store: put
          // them back, or no one would deliver them before a restart reloads them.
          if (this.running) for (const item of items) this.ready.push(lane, item);
          if (ticket !== null) await this.flow.bind(ticket, []);
          throw error;
        }
        // A pause or limits set while the store reserved hold for these too: given back, and the reserve starts over.
        if (reserved.length > 0 && (await handOutOrGiveBack(this.gate, topic, token, reserved, this.giveBack)) === null) {
          if (ticket !== null) await this.flow.bind(ticket, []);
          continue;
        }
        if (ticket !== null) await this.flow.bind(ticket, reserved);
        const deliveries = deliverAll(reserved, now, deliver);
        if (deliveries.length > 0) return deliveries;
        continue;
      }
      if (ticket !== null) await this.flow.bind(ticket, []);
      if (signal.aborted) return [];
      await this.ready.waitFor(lane, signal);
    }
  }

  forget(refs: readonly TimerRef[], final: boolean): void {
    this.ready.forget(refs, final);
  }

  /** The backlog of paused and limited topics does not count: it would stop the loader for every other topic. */
  whenBacklogAtMost(level: number): Promise<void> {
    let held = 0;
    for (const [lane, n] of Object.entries(this.ready.backlogByTopic())) {
      const topic = topicOfLane(lane);
      if (this.pauses.has(topic) || this.flow.limitsOf(topic) !== undefined) held += n;
    }
    return this.ready.whenBacklogAtMost(level + held);
  }

  /** A push lane's backlog counts as its topic's. */
  backlogByTopic(): Readonly<Record<string, number>> {
    return foldLanes(this.ready.backlogByTopic(), (a, b) => a + b);
  }

  oldestReadyByTopic(): Readonly<Record<string, number>> {
    return foldLanes(this.ready.oldestByTopic(), Math.min);
  }

  stop(): void {
    this.running = false;
    this.ready.releaseAll();
  }
}

/** Per-lane figures as per-topic ones: a push lane's joined to its topic's by `join`. */
function foldLanes(byLane: Readonly<Record<string, number>>, join: (a: number, b: number) => number): Record<string, number> {
  const byTopic = dict<number>();
  for (const [lane, n] of Object.entries(byLane)) {
    const topic = topicOfLane(lane);
    const seen = byTopic[topic];
    byTopic[topic] = seen === undefined ? n : join(seen, n);
  }
  return byTopic;
}
