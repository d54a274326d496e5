import type { Clock, TimerToken } from './ports/index.js';

interface ManualTimer {
  readonly at: number;
  readonly seq: number;
  readonly callback: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told: `advance(ms)` runs every timer due on the way, in
 * time order, with `now()` reading each timer's own time as it runs. Tests use it to
 * drive the engine through hours of schedule in microseconds, without sleeping.
 */
export class ManualClock implements Clock {
  private current: number;
  private timers: ManualTimer[] = [];
  private seq = 0;

  constructor(startMs = Date.UTC(2030, 0, 1)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimer(callback: () => void, delayMs: number): TimerToken {
    const timer: ManualTimer = { at: this.current + Math.max(0, delayMs), seq: this.seq++, callback, cancelled: false };
    this.timers.push(timer);
    return timer;
  }

  clearTimer(token: TimerToken): void {
    (token as ManualTimer).cancelled = true;
    this.timers = this.timers.filter((t) => t !== token);
  }

  /** Timers armed and not yet run. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, running due timers (including ones they arm) in order. */
  advance(ms: number): void {
    this.advanceTo(this.current + ms);
  }

  advanceTo(target: number): void {
    for (;;) {
      let next: ManualTimer | undefined;
      for (const t of this.timers) if (t.at <= target && (!next || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.current = Math.max(this.current, next.at);
      next.callback();
    }
    this.current = Math.max(this.current, target);
  }

  /**
   * Jumps the clock without running timers: what an event-loop stall or a wall-clock
   * jump looks like to the code under test. Timers then run on the next advance.
   */
  jump(ms: number): void {
    this.current += ms;
  }
}
