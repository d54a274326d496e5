import type { Clock, TimerToken } from '../core/ports.js';

/** Wall-clock time and Node timers. The one place the engine touches real time. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (callback, delayMs) => {
    const timer = setTimeout(callback, delayMs);
    // A pending delayed task must not keep a process alive on its own: close() is the
    // way to stop, and an idle worker process exits only when its owner says so.
    timer.unref();
    return timer;
  },
  clearTimer: (token: TimerToken) => clearTimeout(token as NodeJS.Timeout),
};
