/**
 * A reserved task handed to its consumer: decoded (a row that cannot be read is quarantined
 * instead, and its flow slot freed at once), its lateness recorded and told to the
 * observer; for a pull consumer its TTR timer armed (`watch`); for a push lane its task's
 * own url noted for the Pusher, since a Delivery has no url field.
 */
import type { QueueObserver } from '../../core/observer.js';
import type { Delivery, ReservedTask } from '../../core/task/model.js';
import { decodeDelivery } from '../../core/task/undecodable.js';
import type { EventSink } from '../events/task-events.js';
import type { Quarantine } from '../tasks/quarantine.js';
import { tracedDelivery } from '../tracing/tracing.js';
import type { Deliver } from './dispatcher.js';
import { LatenessRecorder, type LatenessSummary } from './lateness.js';

export interface HandOutParams {
  readonly observer: QueueObserver;
  readonly events: EventSink;
  readonly quarantine: Pick<Quarantine, 'reserved'>;
  /** A delivery of `topic` (its receipt, or its id for one quarantined) ends here: its flow slot is freed. */
  readonly settled: (topic: string, receipt: string) => void;
  /** Arms a reservation's TTR timer. */
  readonly watch: (delivery: Delivery) => void;
}

export class HandOut {
  private readonly lateness = new LatenessRecorder();
  /** The own push url of each task the Pusher reserved from a push lane, by its delivery. */
  private readonly pushTargets = new WeakMap<Delivery, string>();

  constructor(private readonly params: HandOutParams) {}

  /** Delivers as is: the consumer arms the TTR timer itself if it needs it (workers, a turn later). */
  readonly deliver: Deliver = (record, now) => {
    const decoded = decodeDelivery(record);
    if (decoded.problem !== null) {
      // Quarantined, not delivered: its flow slot is free at once (its topic, if it has one).
      this.params.quarantine.reserved(record, decoded.problem);
      if (typeof record.topic === 'string') this.params.settled(record.topic, record.id);
      return null;
    }
    this.lateness.record(now - record.runAt);
    this.params.observer.delivered(record.topic, now - record.runAt);
    this.params.events.emit({ type: 'delivered', id: record.id, topic: record.topic, attempt: record.attempts, at: now });
    tracedDelivery(decoded.value);
    return decoded.value;
  };

  /** Delivers with the reservation's TTR timer armed now (pull consumers). */
  readonly deliverWatched: Deliver = (record, now) => {
    const delivery = this.deliver(record, now);
    if (delivery !== null) this.params.watch(delivery);
    return delivery;
  };

  /** A delivery of a push lane, its task's url noted (`targetOf`). */
  readonly deliverTarget: Deliver = (record, now) => this.noteTarget(record, this.deliver(record, now));

  readonly deliverTargetWatched: Deliver = (record, now) => this.noteTarget(record, this.deliverWatched(record, now));

  /** The own url of a push lane's delivery. */
  targetOf(delivery: Delivery): string | undefined {
    return this.pushTargets.get(delivery);
  }

  latenessSummary(): LatenessSummary {
    return this.lateness.summary();
  }

  private noteTarget(record: ReservedTask, delivery: Delivery | null): Delivery | null {
    if (delivery !== null && record.url) this.pushTargets.set(delivery, record.url);
    return delivery;
  }
}
