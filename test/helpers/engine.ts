import { ManualClock } from '../../src/core/manual-clock.js';
import { DelayQueue, type DelayQueueOptions } from '../../src/open-queue.js';

/** Lets every promise chain started by the last clock step run to completion (no sleeping). */
export async function flush(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export const T0 = Date.UTC(2030, 0, 1);

export async function openManual(options: DelayQueueOptions = {}): Promise<{ q: DelayQueue; clock: ManualClock }> {
  const clock = new ManualClock(T0);
  const q = await DelayQueue.open({ store: 'memory', clock, random: () => 0.5, ...options });
  return { q, clock };
}

/** A promise with its resolve exposed, for handlers a test finishes by hand. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
