/**
 * The observer port: what the engine reports as it works, for metrics (src/metrics turns it
 * into Prometheus counters and a histogram). The engine calls it on its own path, so an
 * implementation must be cheap and must never throw. Pure interface: no I/O here.
 *
 * Topics: the engine passes the task's topic where it holds it (a schedule, a delivery, a
 * settlement of its own workers, a timer in its wheel); a cancel, nack or expiry, the topic
 * the store answered with (StoreCancelOutcome, NackOutcome). An ack by bare id of a
 * reservation whose timer is not in the wheel (one longer than the loaded window) has no
 * topic at hand without a store read: it is reported under UNKNOWN_TOPIC.
 */

/** The topic label of an event whose task's topic the engine does not hold. */
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
}

/** Observes nothing: the default. */
export const NO_OBSERVER: QueueObserver = {
  scheduled: () => undefined,
  delivered: () => undefined,
  settled: () => undefined,
};
