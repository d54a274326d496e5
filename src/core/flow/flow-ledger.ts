/**
 * The flow limits' shared state kept in memory (the memory and SQLite stores, which one
 * process owns; and the reference the conformance suite compares every store with): a token
 * bucket per topic (token-bucket.ts) and the slots of the deliveries in flight, each held
 * until a time after which it counts no more (a reservation that ran out, a process that
 * died with it).
 *
 * An admission takes tokens and slots together, the slots under a holder name until the
 * caller reserved; `bind` then turns them into one slot per delivery (held until its
 * reservation runs out) and gives back the tokens of what was not reserved.
 *
 *   concurrency 2: admit(want 5) -> 2 granted, slots {h#: 2}; reserve finds 1 task
 *   bind(h, unused 1, [{ id: a, until: 30 000 }]) -> slots {a}; release([a]) -> slots {}
 */
import type { TopicLimits } from './limits.js';
import { nextTokenAt, refill, refund, type BucketState } from './token-bucket.js';

/** An admission: how many deliveries may go now; when none, the earliest time to ask again (0: when a slot frees). */
export interface FlowAdmission {
  readonly granted: number;
  readonly retryAt: number;
}

/** A delivery that holds a slot until its reservation runs out. */
export interface FlowLease {
  readonly id: string;
  readonly until: number;
}

interface Slot {
  readonly n: number;
  readonly until: number;
}

export class FlowLedger {
  private readonly buckets = new Map<string, BucketState>();
  private readonly slots = new Map<string, Map<string, Slot>>();

  admit(topic: string, limits: TopicLimits, want: number, holder: string, holdUntil: number, now: number): FlowAdmission {
    const bucket = refill(this.buckets.get(topic), limits, now);
    let granted = Math.min(want, Math.floor(bucket.tokens));
    let held: Map<string, Slot> | undefined;
    if (limits.concurrency !== null) {
      held = this.live(topic, now);
      let inFlight = 0;
      for (const slot of held.values()) inFlight += slot.n;
      granted = Math.max(0, Math.min(granted, limits.concurrency - inFlight));
    }
    if (limits.rate !== null) this.buckets.set(topic, { tokens: bucket.tokens - granted, at: bucket.at });
    if (held !== undefined && granted > 0) held.set(holder, { n: granted, until: holdUntil });
    const retryAt = granted > 0 ? 0 : bucket.tokens < 1 ? nextTokenAt(bucket.tokens, limits, bucket.at) : 0;
    return { granted, retryAt };
  }

  bind(topic: string, limits: TopicLimits, holder: string, unused: number, leases: readonly FlowLease[], now: number): void {
    if (limits.rate !== null && unused > 0) {
      const bucket = this.buckets.get(topic);
      if (bucket !== undefined) this.buckets.set(topic, refund(bucket, limits, unused, now));
    }
    if (limits.concurrency === null) return;
    // An admission held past its time counts no more: its slots are gone, and so are its deliveries'.
    const held = this.live(topic, now);
    if (!held.delete(holder)) return;
    for (const lease of leases) held.set(lease.id, { n: 1, until: lease.until });
  }

  release(topic: string, ids: readonly string[]): void {
    const held = this.slots.get(topic);
    if (held === undefined) return;
    for (const id of ids) held.delete(id);
    if (held.size === 0) this.slots.delete(topic);
  }

  /** The topic's slots that still count at `now`; those that ran out go. */
  private live(topic: string, now: number): Map<string, Slot> {
    let held = this.slots.get(topic);
    if (held === undefined) this.slots.set(topic, (held = new Map<string, Slot>()));
    for (const [key, slot] of held) if (slot.until <= now) held.delete(key);
    return held;
  }
}
