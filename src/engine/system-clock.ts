import { performance } from 'node:perf_hooks';
import type { Clock, TimerToken } from '../core/ports.js';
import { FineWaitBudget, WallTimer, type TimerHost } from './wall-timer.js';

const nodeTimers: TimerHost = {
  now: () => Date.now(),
  elapsed: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  setImmediate: (callback) => setImmediate(callback),
  clearImmediate: (handle) => clearImmediate(handle as NodeJS.Immediate),
  // A futex wait: the thread sleeps, burns no CPU and allocates nothing (a loop polling
  // Date.now() allocated a heap number per poll, ~90 MB/s in the Redis store's S3 test).
  waitUntil: (at, maxMs) => {
    if (Date.now() < at) Atomics.wait(sleeper, 0, 0, maxMs);
  },
};
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const budget = new FineWaitBudget(() => performance.now());

/**
 * Wall-clock time and Node timers. The one place the engine touches real time.
 *
 * A delay runs as a WallTimer (wall-timer.ts): it fires when Date.now() reaches the time
 * the delay names, not up to a millisecond or two later as setTimeout would.
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
  setTimer: (callback, delayMs) => (delayMs > 0 ? new WallTimer(nodeTimers, budget, callback, Date.now() + delayMs) : setImmediate(callback)),
  clearTimer: (token: TimerToken) => {
    if (token instanceof WallTimer) token.cancel();
    else clearImmediate(token as NodeJS.Immediate);
  },
};
