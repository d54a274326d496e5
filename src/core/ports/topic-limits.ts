/** The store port's flow-limit role: each topic's rate and concurrency limits, and their shared state (issue 36, ADR 0043). */
import type { FlowAdmission, FlowAdmissionRequest, FlowBinding, FlowLease } from '../flow/flow-ledger.js';
import type { LimitedTopics, TopicLimits } from '../flow/limits.js';

export type { FlowAdmission, FlowAdmissionRequest, FlowBinding, FlowLease } from '../flow/flow-ledger.js';
export type { LimitedTopics, TopicLimits } from '../flow/limits.js';

/**
 * Flow limits (ADR 0043, ADR 0052). The limits themselves are a small map, durable as tasks are and rarely
 * written, read and synced by every process as the paused topics are (`version`). The state
 * they govern (a token bucket per topic, the slots of deliveries in flight) is kept where
 * every process sharing the store sees it, and changed in one atomic step per call, so a
 * limit holds across processes. The rules are token-bucket.ts and flow-ledger.ts; a store
 * keeps them in its own form (a Map, Redis keys under one hash tag, PostgreSQL rows).
 *
 * The caller passes the limits it holds to each call: a store does not read them back.
 */
export interface TopicLimitStore {
  /** Sets (`limits`) or clears (null) `topic`'s limits; true if that changed them (and moved the version). */
  setTopicLimits(topic: string, limits: TopicLimits | null): Promise<boolean>;
  /** Every limited topic's limits, and their version. */
  topicLimits(): Promise<LimitedTopics>;
  /**
   * Takes up to `want` deliveries of `topic` now: whole tokens from its bucket (when it has
   * a rate) and, when it has a concurrency, that many slots under `holder`, held until
   * `holdUntil` at most. `granted` may be 0; then `retryAt` is when a token comes (0: when
   * a slot is freed).
   */
  admitFlow(request: FlowAdmissionRequest): Promise<FlowAdmission>;
  /**
   * Ends an admission: its `unused` tokens go back to the bucket (never past burst), and the
   * slots held under `holder` become one slot per delivery in `leases`, each held until its
   * `until` (its reservation's end) or until released.
   */
  bindFlow(binding: FlowBinding): Promise<void>;
  /** The deliveries `ids` of `topic` were settled: their slots are freed. Unknown ids are ignored. */
  releaseFlow(topic: string, ids: readonly string[]): Promise<void>;
  /**
   * Each delivery in `leases` holds a slot of `topic` until its `until`, added or moved (a
   * renewed reservation keeps its slot to its new end; the reservations in flight when a
   * concurrency is set start holding theirs, ADR 0052).
   */
  holdFlow(topic: string, leases: readonly FlowLease[], now: number): Promise<void>;
  /**
   * The reservations of `topic` in force: reserved, ending after `now` and at or before
   * `until`, as leases (id, reservedUntil), in no order. Read once when a concurrency is set,
   * so it may cost a bounded scan of the reservations ending in that range.
   */
  reservedLeases(topic: string, now: number, until: number): Promise<FlowLease[]>;
}
