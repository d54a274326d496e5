import type { Clock, TimerToken } from '../core/ports.js';

/**
 * Wall-clock time and Node timers. The one place the engine touches real time.
 *
 * A zero delay runs on setImmediate, not setTimeout: Node turns setTimeout(fn, 0) into a
 * 1 ms timer, and libuv fires it against a loop time taken before the callback that asked
 * for it. Under load the timer driver finishes a batch with its next deadline already
 * passed; as a 1 ms timer, that deadline waited another 1-2 ms every time (measured: the
 * driver's timers fired 1.2 ms past their deadline at the median, 200,000 tasks in 2 s).
 * An immediate runs after this turn's I/O, so nothing starves, but without that wait.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  // An open queue keeps its process alive, as a listening socket does: close() ends it.
  setTimer: (callback, delayMs) => (delayMs > 0 ? setTimeout(callback, delayMs) : setImmediate(callback)),
  clearTimer: (token: TimerToken) => {
    // Only a Timeout has refresh(); clearImmediate must never see one (and vice versa).
    if (typeof (token as NodeJS.Timeout).refresh === 'function') clearTimeout(token as NodeJS.Timeout);
    else clearImmediate(token as NodeJS.Immediate);
  },
};
