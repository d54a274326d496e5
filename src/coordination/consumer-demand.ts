/**
 * How many tasks of a topic this process's consumers are asking for right now, so that a
 * promotion can reserve due tasks for them in the same call (timer to consumer in one round
 * trip) instead of pushing them to the shared ready lists. A consumer asks while its call
 * waits or has reserve calls in flight, and for LINGER_MS after the call returns.
 *
 *   worker calls reserveReady(max 4)     asking 4 x PROMOTE_AHEAD = 128
 *   its call returns at t                still counts 128 until t + LINGER_MS
 *   a promotion of 10 due tasks at t+20  reserves 10 for it (kept until it calls again)
 */
import type { Clock } from '../core/ports/index.js';

/** Promotions reserve ahead for a consumer up to this many times what it asked for: a stall makes several ticks due at once (ADR 0008). */
export const PROMOTE_AHEAD = 32;
/** A consumer counts as asking this long after its call returned: it asks again once its handlers start (ADR 0009). */
export const LINGER_MS = 50;

export class ConsumerDemand {
  /**
   * Per topic: what local consumers (default ttr) are asking for, waiting or with reserve
   * calls in flight. Counting only the waiting ones sent every task that fell due during
   * a call to the shared lists (ADR 0009).
   */
  private readonly asking = new Map<string, number>();
  /** Per topic: how many of the promotions in flight have already promised to reserve. */
  private readonly promisedBy = new Map<string, number>();
  /** Per topic: what the last finished call asked for, and until when it still counts. */
  private readonly lingering = new Map<string, { want: number; until: number }>();

  constructor(private readonly clock: Clock) {}

  /** A consumer call for `want` tasks starts asking; pass the answer to `stop`. */
  start(topic: string, want: number): number {
    const asking = PROMOTE_AHEAD * want;
    this.asking.set(topic, (this.asking.get(topic) ?? 0) + asking);
    return asking;
  }

  /** The call returned: it still counts for LINGER_MS, as it asks again a little later. */
  stop(topic: string, asking: number): void {
    this.asking.set(topic, (this.asking.get(topic) ?? 0) - asking);
    this.lingering.set(topic, { want: asking, until: this.clock.now() + LINGER_MS });
  }

  /** How many tasks of `topic` local consumers are asking for: calls waiting or in flight, or the last one's within LINGER_MS. */
  of(topic: string): number {
    const asking = this.asking.get(topic) ?? 0;
    const lingering = this.lingering.get(topic);
    return lingering !== undefined && lingering.until > this.clock.now() ? Math.max(asking, lingering.want) : asking;
  }

  /** What promotions in flight will reserve for `topic`'s consumers. */
  promised(topic: string): number {
    return this.promisedBy.get(topic) ?? 0;
  }

  /** `n` more (or, negative, fewer) promised by a promotion in flight. */
  promise(topic: string, n: number): void {
    this.promisedBy.set(topic, this.promised(topic) + n);
  }
}
