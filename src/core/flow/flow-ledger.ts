/**
 * The flow limits' shared state kept in memory (the memory and SQLite stores, which one
 * process owns; and the reference the conformance suite compares every store with): a token
 * bucket per topic (token-bucket.ts) and the slots of the deliveries in flight, each held
 * until a time after which it counts no more (a reservation that ran out, a process that
 * died with it).
 *
 * An admission takes tokens and slots together, under a holder name until the caller
 * reserved; `bind` then turns the slots into one per delivery (held until its reservation
 * runs out) and gives back the tokens of what was not reserved. Tokens an admission holds
 * count against the burst until it is bound (ADR 0052): the bucket refills only up to
 * `burst` minus the tokens admissions hold, so tokens taken for consumers that wait for a
 * task and a bucket refilled meanwhile never add up to more than `burst` at once.
 *
 *   concurrency 2: admit(want 5) -> 2 granted, slots {h#: 2}; reserve finds 1 task
 *   bind(h, unused 1, [{ key: <a's receipt>, until: 30 000 }]) -> slots {a}; release([a's receipt]) -> slots {}
 *   rate 10/s burst 5: admit 5 at 0 (held 5) -> the bucket stays empty; bind at 1 000, all
 *   used -> still empty: the second that passed refilled nothing (5 went out, not 15)
 */
import type { TopicLimits } from './limits.js';
import { nextTokenAt, refill, refund, type BucketState } from './token-bucket.js';

/** An admission: how many deliveries may go now; when none, the earliest time to ask again (0: when a slot frees). */
export interface FlowAdmission {
  readonly granted: number;
  readonly retryAt: number;
}

/** An admission asked of the store (TopicLimitStore.admitFlow, FlowLedger.admit). */
export interface FlowAdmissionRequest {
  readonly topic: string;
  /** The limits the caller holds: a store does not read them back. */
  readonly limits: TopicLimits;
  /** Deliveries wanted now. */
  readonly want: number;
  /** Who holds the slots taken, until bindFlow ends the admission. */
  readonly holder: string;
  /** The slots are held until then at most, if the admission is never bound (its process died). */
  readonly holdUntil: number;
  readonly now: number;
}

/** The end of an admission (TopicLimitStore.bindFlow, FlowLedger.bind). */
export interface FlowBinding {
  readonly topic: string;
  readonly limits: TopicLimits;
  /** The admission's holder. */
  readonly holder: string;
  /** Tokens and slots the admission took and did not use. */
  readonly unused: number;
  /** The deliveries the admission became, one slot each. */
  readonly leases: readonly FlowLease[];
  readonly now: number;
}

/** A delivery that holds a slot until its reservation runs out. */
export interface FlowLease {
  /**
   * The delivery's receipt: a slot belongs to one reservation, so the late release of an
   * attempt given back or settled frees nothing of the task's next one.
   */
  readonly key: string;
  readonly until: number;
}

interface Slot {
  /** Slots held (a concurrency): the admission's granted, or 1 for a delivery. */
  readonly n: number;
  /** Tokens held (a rate): an admission's granted, until bound. */
  readonly t: number;
  readonly until: number;
}

export class FlowLedger {
  private readonly buckets = new Map<string, BucketState>();
  private readonly slots = new Map<string, Map<string, Slot>>();

  admit({ topic, limits, want, holder, holdUntil, now }: FlowAdmissionRequest): FlowAdmission {
    const held = this.held(topic);
    const bucket = this.refilled(topic, limits, held, now);
    this.dropRunOut(held, now);
    let granted = Math.max(0, Math.min(want, Math.floor(bucket.tokens)));
    if (limits.concurrency !== null) {
      let inFlight = 0;
      for (const slot of held.values()) inFlight += slot.n;
      granted = Math.max(0, Math.min(granted, limits.concurrency - inFlight));
    }
    if (limits.rate !== null) this.buckets.set(topic, { tokens: bucket.tokens - granted, at: bucket.at });
    if (granted > 0) held.set(holder, { n: limits.concurrency === null ? 0 : granted, t: limits.rate === null ? 0 : granted, until: holdUntil });
    if (held.size === 0) this.slots.delete(topic);
    const retryAt = granted > 0 ? 0 : bucket.tokens < 1 ? nextTokenAt(bucket.tokens, limits, bucket.at) : 0;
    return { granted, retryAt };
  }

  bind({ topic, limits, holder, unused, leases, now }: FlowBinding): void {
    const held = this.held(topic);
    // Brought to now with this admission's tokens still held: the time they were held refilled nothing past burst.
    let bucket = this.refilled(topic, limits, held, now);
    this.dropRunOut(held, now);
    // An admission held past its time counts no more: its slots are gone, and so are its
    // deliveries'; its tokens came back to the bucket's room when it was dropped.
    const admission = held.get(holder);
    held.delete(holder);
    if (limits.rate !== null) {
      if (unused > 0 && admission !== undefined) bucket = refund(bucket, limits, unused, now, heldTokens(held));
      this.buckets.set(topic, bucket);
    }
    if (admission !== undefined && limits.concurrency !== null) for (const lease of leases) held.set(lease.key, { n: 1, t: 0, until: lease.until });
    if (held.size === 0) this.slots.delete(topic);
  }

  release(topic: string, keys: readonly string[]): void {
    const held = this.slots.get(topic);
    if (held === undefined) return;
    for (const key of keys) held.delete(key);
    if (held.size === 0) this.slots.delete(topic);
  }

  /** Each delivery in `leases` holds a slot until its `until` (a renewed reservation, or one in flight when a concurrency was set). */
  hold(topic: string, leases: readonly FlowLease[]): void {
    if (leases.length === 0) return;
    const held = this.held(topic);
    for (const lease of leases) held.set(lease.key, { n: 1, t: 0, until: lease.until });
  }

  /** The topic's slots and holders (created empty). */
  private held(topic: string): Map<string, Slot> {
    let held = this.slots.get(topic);
    if (held === undefined) this.slots.set(topic, (held = new Map<string, Slot>()));
    return held;
  }

  /**
   * The bucket brought to `now`, refilled up to burst minus the tokens held: those of every
   * holder still listed, run out or not (one that ran out since the last call held them
   * until it is dropped, here, after the refill: the limit errs towards fewer deliveries).
   */
  private refilled(topic: string, limits: TopicLimits, held: ReadonlyMap<string, Slot>, now: number): BucketState {
    return refill(this.buckets.get(topic), limits, now, heldTokens(held));
  }

  private dropRunOut(held: Map<string, Slot>, now: number): void {
    for (const [key, slot] of held) if (slot.until <= now) held.delete(key);
  }
}

function heldTokens(held: ReadonlyMap<string, Slot>): number {
  let tokens = 0;
  for (const slot of held.values()) tokens += slot.t;
  return tokens;
}
