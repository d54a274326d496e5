/**
 * Timers that fire as soon as the wall clock (Date.now(), whole ms) reaches a time, not a
 * millisecond or two later.
 *
 * Node's setTimeout alone fires late against a wall-clock deadline (ADR 0018): the caller
 * counts the delay from Date.now(), which is floored, and libuv counts it from a loop time
 * taken at the start of the turn and fires on its own millisecond boundaries, which are not
 * Date.now()'s. A timer that fires a fraction early (Date.now() one short of the deadline)
 * then waits a whole further millisecond.
 *
 * So a WallTimer sleeps on setTimeout until the deadline is at most 1 ms away, then waits
 * out the rest finely: short blocking waits of FINE_WAIT_SLICE_MS (a futex in Node, no CPU
 * burnt), with a turn of the event loop (setImmediate, so I/O runs) between them, until
 * Date.now() reaches the deadline. Each slice holds the event loop,
 * so the fine waiting comes out of a budget: at most FINE_WAIT_SHARE of the wall time, saved
 * up to FINE_WAIT_BURST_MS. A process with a deadline in every millisecond would otherwise
 * spend most of its idle time in slices and turns; out of budget, a timer sleeps its last
 * millisecond as plain setTimeout does (later, never early).
 */

/** The clock and the Node timer functions a WallTimer uses; tests give simulated ones. */
export interface TimerHost {
  /** Wall-clock time in whole ms (Date.now). */
  now(): number;
  /** A monotonic time in fractional ms (performance.now), to meter the fine waiting. */
  elapsed(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  setImmediate(callback: () => void): unknown;
  clearImmediate(handle: unknown): void;
  /** Blocks until now() reaches `at` or `maxMs` have passed (either may run over a little). */
  waitUntil(at: number, maxMs: number): void;
}

/** Of the wall time, the share that timers may spend waiting finely: a bound on held event-loop time (ADR 0018). */
export const FINE_WAIT_SHARE = 0.05;
/** The most fine waiting saved up while idle, in ms: enough for a burst of deadlines (ADR 0018). */
export const FINE_WAIT_BURST_MS = 20;
/** One blocking wait, in ms: what a timer in its last millisecond may delay I/O by (ADR 0018). */
export const FINE_WAIT_SLICE_MS = 0.05;

/** The fine-waiting budget shared by the timers of one host (one event loop). */
export class FineWaitBudget {
  private saved = FINE_WAIT_BURST_MS;
  private at: number;

  constructor(private readonly elapsed: () => number) {
    this.at = elapsed();
  }

  /** True when there is fine waiting left. */
  available(): boolean {
    this.refill();
    return this.saved > 0;
  }

  /** Counts `ms` spent waiting finely. */
  spend(ms: number): void {
    this.refill();
    this.saved -= ms;
  }

  private refill(): void {
    const now = this.elapsed();
    this.saved = Math.min(FINE_WAIT_BURST_MS, this.saved + (now - this.at) * FINE_WAIT_SHARE);
    this.at = now;
  }
}

export class WallTimer {
  private timeout: unknown = null;
  private immediate: unknown = null;
  /** When the current fine wait began (host.elapsed()), or -1. */
  private fineFrom = -1;
  private done = false;
  private readonly armedAt: number;

  constructor(
    private readonly host: TimerHost,
    private readonly budget: FineWaitBudget,
    private readonly callback: () => void,
    /** The wall-clock ms to fire at. */
    private readonly at: number,
  ) {
    this.armedAt = host.now();
    // Never the callback from here, even when the time has come already (Date.now() may
    // have reached it since the caller read it): a caller storing the token we return must
    // not have its callback run before it has the token.
    this.next(at - this.armedAt);
  }

  cancel(): void {
    this.stopFineWait();
    if (this.timeout !== null) this.host.clearTimeout(this.timeout);
    if (this.immediate !== null) this.host.clearImmediate(this.immediate);
    this.timeout = this.immediate = null;
    this.done = true;
  }

  private readonly wake = (): void => {
    this.timeout = this.immediate = null;
    if (this.done) return;
    if (this.fineFrom >= 0) this.host.waitUntil(this.at, FINE_WAIT_SLICE_MS);
    const now = this.host.now();
    // A wall clock set back is not waited out here: the caller sees the time and re-arms.
    if (this.at <= now || now < this.armedAt) {
      this.stopFineWait();
      this.done = true;
      this.callback();
      return;
    }
    this.next(this.at - now);
  };

  /** The next step with `left` ms to go: asleep until the last ms, then finely. */
  private next(left: number): void {
    if (left <= 0) {
      this.immediate = this.host.setImmediate(this.wake);
    } else if (left > 1) {
      this.stopFineWait();
      this.timeout = this.host.setTimeout(this.wake, left - 1);
    } else if (this.fineFrom >= 0 || this.budget.available()) {
      if (this.fineFrom < 0) this.fineFrom = this.host.elapsed();
      this.immediate = this.host.setImmediate(this.wake);
    } else {
      this.timeout = this.host.setTimeout(this.wake, left);
    }
  }

  private stopFineWait(): void {
    if (this.fineFrom < 0) return;
    this.budget.spend(this.host.elapsed() - this.fineFrom);
    this.fineFrom = -1;
  }
}
