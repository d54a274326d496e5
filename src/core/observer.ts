/**
 * The observer port: what the engine reports as it works, for metrics (src/metrics turns it
 * into Prometheus counters and a histogram). The engine calls it on its own path, so an
 * implementation must be cheap and must never throw. Pure interface: no I/O here.
 *
 * Topics: the engine passes the task's topic where it holds it (a schedule, a delivery); an
 * ack, cancel, nack or expiry, the topic the store answered with (StoreAckOutcome,
 * StoreCancelOutcome, NackOutcome), read where it changed the task, so every settlement is
 * counted under its task's own topic, whether or not its timer is in the wheel.
 */

import type { EventDropReason } from './events.js';

/** The topic label of an event that names no topic (a push request sent without its delayq-topic header). */
export const UNKNOWN_TOPIC = '_unknown';

/** How a delivery or a pending task ended (or failed): the counters by outcome. */
export type SettleOutcome = 'acked' | 'failed' | 'dead' | 'cancelled';

export interface QueueObserver {
  /** `count` new tasks of `topic` were created (existing ids are not counted). */
  scheduled(topic: string, count: number): void;
  /** A task was delivered (to a handler, a reserve or a push), `latenessMs` after its runAt. */
  delivered(topic: string, latenessMs: number): void;
  /** A delivery was acked, failed (back to pending for a retry) or went dead; a pending task was cancelled. */
  settled(topic: string, outcome: SettleOutcome): void;
  /** A delivery of `topic` waited for the topic's flow limits (an admission was refused). */
  throttled?(topic: string): void;
  /** `count` lifecycle events were lost (core/events.ts): not written, or read back and not events. */
  eventsDropped?(reason: EventDropReason, count: number): void;
}

/** Observes nothing: the default. */
export const NO_OBSERVER: QueueObserver = {
  scheduled: () => undefined,
  delivered: () => undefined,
  settled: () => undefined,
};
