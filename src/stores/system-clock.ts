/**
 * The clock a store's background work runs on when whoever opens the store gives none
 * (`openStore` without `StoreOptions.clock`). Stores never read time themselves: they are
 * handed a Clock, and this is the one file under src/stores that touches Node's timers
 * (scripts/check-boundaries.ts exempts exactly it).
 *
 * Plain Node timers, not the engine's WallTimer: a store's timers (the next group commit,
 * a checkpoint pass, a write held for the checkpointer) want "soon", not the exact
 * millisecond. A zero delay is an immediate: it runs after this turn's I/O, which is what
 * batches every write of one turn into one commit.
 */
import type { Clock, TimerToken } from '../core/ports/index.js';

export const storeSystemClock: Clock = {
  now: () => Date.now(),
  setTimer: (callback, delayMs) => (delayMs > 0 ? setTimeout(callback, delayMs) : setImmediate(callback)),
  clearTimer: (token: TimerToken) => {
    // A Timeout has refresh(), an Immediate does not; each clear function wants its own kind.
    if (typeof (token as Partial<NodeJS.Timeout>).refresh === 'function') clearTimeout(token as NodeJS.Timeout);
    else clearImmediate(token as NodeJS.Immediate);
  },
};
