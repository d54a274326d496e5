import type { Clock, Logger, TimerToken } from '../core/ports/index.js';
import type { InFlight } from './in-flight.js';
import type { LoopContext } from './loop-context.js';

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

/**
 * A loop that makes one kind of background store call and retries it after a failure
 * (the Expirer, the Promoter): it runs between start() and stop(), its calls are tracked
 * for close(), and stop() drops the retries still to come.
 */
export abstract class RetryingLoop {
  protected running = false;
  protected readonly retries: RetryTimers;
  protected readonly clock: Clock;
  protected readonly logger: Logger;
  protected readonly inFlight: InFlight;

  constructor(context: Pick<LoopContext, 'clock' | 'logger' | 'inFlight' | 'tuning'>) {
    ({ clock: this.clock, logger: this.logger, inFlight: this.inFlight } = context);
    this.retries = new RetryTimers(context.clock, context.tuning.storeRetryMs);
  }

  start(): void {
    this.running = true;
  }

  stop(): void {
    this.running = false;
    this.retries.stop();
  }
}
