/**
 * A fixed number of slots (the pushes a process has in flight, `maxInFlight`) shared
 * between keys (the Pusher's consumers: each subscribed topic, and the lane of tasks with
 * their own url). Pure counting: no clock, no waiting; engine/push/push-slots.ts queues and wakes.
 *
 * A key is *busy* while it holds a slot or waits for one. With b busy keys, the one asking
 * counted in, each may hold at most ceil(limit / (b + 1)) slots: one share is always kept
 * back for a key that is not busy yet. A slot cannot be taken back from a push in flight,
 * and a receiver that never answers keeps its pushes in flight until they time out; the
 * share kept back is what lets another topic start pushing at once, not a timeout later.
 * Shares shrink as keys become busy; a key above its share takes no slot until its own
 * pushes bring it under.
 *
 * Example, limit 256. Topic A alone may hold 128 (ceil(256 / 2)), and its receiver hangs:
 * it holds 128. Topic B starts (b = 2, shares of 86): B takes up to 86 at once; A, above
 * its share, takes none until it is down to 85. C starts (b = 3, shares of 64): it finds
 * 256 - 128 - 86 = 42 slots free at worst, and more as A and B fall back to their shares.
 */
export class FairShare {
  /** Only busy keys: a key that holds nothing and waits for nothing has no entry. */
  private readonly keys = new Map<string, { held: number; waiting: number }>();
  private held_ = 0;

  constructor(readonly limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit: a positive integer (got ${String(limit)})`);
  }

  /** Slots held, over every key. */
  get inFlight(): number {
    return this.held_;
  }

  held(key: string): number {
    return this.keys.get(key)?.held ?? 0;
  }

  /** The most slots `key` may hold now (its share), were it busy. */
  share(key: string): number {
    const busy = this.keys.size + (this.keys.has(key) ? 0 : 1);
    return Math.ceil(this.limit / (busy + 1));
  }

  /** How many slots `key` may take now. */
  room(key: string): number {
    return Math.max(0, Math.min(this.limit - this.held_, this.share(key) - this.held(key)));
  }

  /** Takes a slot for `key` if it has room; false: nothing changed. */
  take(key: string): boolean {
    if (this.room(key) === 0) return false;
    this.entry(key).held++;
    this.held_++;
    return true;
  }

  release(key: string): void {
    const k = this.keys.get(key);
    if (k === undefined || k.held === 0) throw new Error(`release: ${key} holds no slot`);
    k.held--;
    this.held_--;
    this.forgetIdle(key, k);
  }

  /** `key` waits for a slot (it is busy meanwhile). */
  want(key: string): void {
    this.entry(key).waiting++;
  }

  /** A wait of `key` ended. */
  unwant(key: string): void {
    const k = this.keys.get(key);
    if (k === undefined || k.waiting === 0) throw new Error(`unwant: ${key} is not waiting`);
    k.waiting--;
    this.forgetIdle(key, k);
  }

  private entry(key: string): { held: number; waiting: number } {
    let k = this.keys.get(key);
    if (k === undefined) this.keys.set(key, (k = { held: 0, waiting: 0 }));
    return k;
  }

  private forgetIdle(key: string, k: { held: number; waiting: number }): void {
    if (k.held === 0 && k.waiting === 0) this.keys.delete(key);
  }
}
