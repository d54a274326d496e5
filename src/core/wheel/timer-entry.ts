import type { TimerHandle } from './timer.js';
import type { Bucket } from './bucket.js';

/** A pending value in the wheel: a node of its bucket's doubly linked list, so cancel is O(1). */
export class TimerEntry<T> implements TimerHandle<T> {
  prev: TimerEntry<T> | null = null;
  next: TimerEntry<T> | null = null;
  bucket: Bucket<T> | null = null;

  constructor(
    readonly value: T,
    readonly runAt: number,
    readonly seq: number,
    /** runAt in whole ticks, rounded up: a value is due once the clock reaches this tick. */
    readonly tick: number,
  ) {}
}

export function compareEntries<T>(a: TimerHandle<T>, b: TimerHandle<T>): number {
  return a.runAt - b.runAt || a.seq - b.seq;
}
