/**
 * Failed pushes in the log, at warn, without flooding it: at most one line per destination
 * origin per PUSH_FAILURE_LOG_INTERVAL_MS, the next one saying how many failures of that
 * origin it left out meanwhile. A receiver down for an hour under 1,000 pushes/s is a line
 * every 10 s, not 3.6 million. Time is the queue's clock, so a test drives it by hand.
 */
import type { PushResultClass } from '../../core/push.js';
import type { Clock, Logger } from '../../core/ports/index.js';

export const PUSH_FAILURE_LOG_INTERVAL_MS = 10_000;
/** Origins remembered at once (per-task urls may all differ); the oldest is forgotten first. */
const MAX_ORIGINS = 10_000;

export interface PushFailure {
  readonly origin: string;
  readonly topic: string;
  readonly id: string;
  readonly attempt: number;
  readonly result: PushResultClass;
  /** The failure as the task's lastError has it ("HTTP 500: ...", "timeout after 10000 ms"). */
  readonly error: string;
}

export class PushFailureLog {
  /** Per origin: when its last line was written, and the failures left out since. */
  private readonly origins = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly intervalMs = PUSH_FAILURE_LOG_INTERVAL_MS,
  ) {}

  failed(failure: PushFailure): void {
    const now = this.clock.now();
    const seen = this.origins.get(failure.origin);
    if (seen !== undefined && now - seen.at < this.intervalMs) {
      seen.suppressed++;
      return;
    }
    const suppressed = seen?.suppressed ?? 0;
    const more = suppressed > 0 ? `; ${suppressed} more failed pushes to it were not logged in the last ${Math.round((now - (seen?.at ?? now)) / 1000)} s` : '';
    const hint = failure.result === 'refused' ? ' (an address the SSRF rules refuse: allow it with --push-allow / DELAYQ_PUSH_ALLOW if it is yours)' : '';
    this.logger.warn({ ...failure, suppressed }, `push to ${failure.origin} failed: ${failure.error}${hint}${more}`);
    this.origins.delete(failure.origin);
    if (this.origins.size >= MAX_ORIGINS) {
      const oldest = this.origins.keys().next();
      if (oldest.done !== true) this.origins.delete(oldest.value);
    }
    this.origins.set(failure.origin, { at: now, suppressed: 0 });
  }
}
