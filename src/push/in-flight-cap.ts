/**
 * A counting semaphore: at most `limit` holders at once, the rest wait in arrival order.
 * The transport holds one slot per push from before it connects until its body is read.
 */
export class InFlightCap {
  private held = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit: a positive integer (got ${String(limit)})`);
  }

  get inFlight(): number {
    return this.held;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Takes a slot if one is free now (no promise); false: none is, nothing is held. */
  tryAcquire(): boolean {
    if (this.held >= this.limit) return false;
    this.held += 1;
    return true;
  }

  /**
   * Resolves true with a slot, or false if `signal` aborts or `maxWaitMs` passes first (no
   * slot is then held).
   */
  acquire(signal?: AbortSignal, maxWaitMs?: number): Promise<boolean> {
    if (signal?.aborted === true) return Promise.resolve(false);
    if (this.tryAcquire()) return Promise.resolve(true);
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const grant = (): void => {
        signal?.removeEventListener('abort', giveUp);
        clearTimeout(timer);
        resolve(true);
      };
      const giveUp = (): void => {
        const at = this.waiting.indexOf(grant);
        if (at >= 0) this.waiting.splice(at, 1);
        signal?.removeEventListener('abort', giveUp);
        clearTimeout(timer);
        resolve(false);
      };
      signal?.addEventListener('abort', giveUp, { once: true });
      if (maxWaitMs !== undefined) timer = setTimeout(giveUp, maxWaitMs);
      this.waiting.push(grant);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    // The slot passes straight to the next waiter: `held` stays the same.
    if (next !== undefined) next();
    else this.held -= 1;
  }
}
