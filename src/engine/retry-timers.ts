import type { Clock, TimerToken } from '../core/ports.js';

/**
 * Background store calls to make again later: a loop whose store call failed hands the
 * retry here, and it runs after `delayMs` (the queue's `storeRetryMs`) unless the loop
 * stops first. Stopping loses nothing: what a retry would have done (expire a reservation,
 * promote a due task) is still to do in the store, and the next start reloads it.
 */
export class RetryTimers {
  private readonly pending = new Set<TimerToken>();
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly delayMs: number,
  ) {}

  later(retry: () => void): void {
    if (this.stopped) return;
    const token = this.clock.setTimer(() => {
      this.pending.delete(token);
      if (!this.stopped) retry();
    }, this.delayMs);
    this.pending.add(token);
  }

  stop(): void {
    this.stopped = true;
    for (const token of this.pending) this.clock.clearTimer(token);
    this.pending.clear();
  }
}
