import type { Clock, TimerToken } from '../core/ports.js';

/** Wall-clock time and Node timers. The one place the engine touches real time. */
export const systemClock: Clock = {
  now: () => Date.now(),
  // An open queue keeps its process alive, as a listening socket does: close() ends it.
  setTimer: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimer: (token: TimerToken) => clearTimeout(token as NodeJS.Timeout),
};
