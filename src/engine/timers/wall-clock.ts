import { performance } from 'node:perf_hooks';
import type { Clock, TimerToken } from '../../core/ports/index.js';
import { FineWaitBudget, WallTimer, type TimerHost } from './wall-timer.js';

const nodeTimers: TimerHost = {
  now: () => Date.now(),
  elapsed: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  setImmediate: (callback) => setImmediate(callback),
  clearImmediate: (handle) => clearImmediate(handle as NodeJS.Immediate),
  // A futex wait: the thread sleeps, burns no CPU and allocates nothing, where a loop
  // polling Date.now() allocates a heap number per poll (ADR 0018).
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
 * 1 ms timer, so a deadline that a busy batch has already passed would wait another
 * millisecond or two; an immediate runs after this turn's I/O, so nothing starves (ADR 0018).
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
