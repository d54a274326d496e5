import type { Timer, TimerHandle } from './timer.js';
import { compareEntries } from './timer-entry.js';

interface RefEntry<T> extends TimerHandle<T> {
  live: boolean;
}

/**
 * The test oracle: the obvious, slow timer. It keeps an array and, on every advance,
 * filters and sorts it. Property tests check the wheel against it; nothing else uses it.
 */
export class ReferenceTimer<T> implements Timer<T> {
  private entries: RefEntry<T>[] = [];
  private nowMs: number;
  private nextSeq = 0;

  constructor(startMs: number, private readonly tickMs = 1) {
    this.nowMs = Math.floor(startMs / tickMs) * tickMs;
  }

  get size(): number {
    return this.entries.length;
  }

  add(runAt: number, value: T): TimerHandle<T> | undefined {
    if (runAt <= this.nowMs) return undefined;
    const entry: RefEntry<T> = { value, runAt, seq: this.nextSeq++, live: true };
    this.entries.push(entry);
    return entry;
  }

  cancel(handle: TimerHandle<T>): boolean {
    const entry = handle as RefEntry<T>;
    if (!entry.live) return false;
    entry.live = false;
    this.entries = this.entries.filter((e) => e !== entry);
    return true;
  }

  advance(nowMs: number): T[] {
    const now = Math.floor(nowMs / this.tickMs) * this.tickMs;
    if (now <= this.nowMs) return [];
    this.nowMs = now;
    const due = this.entries.filter((e) => e.runAt <= now).sort(compareEntries);
    this.entries = this.entries.filter((e) => e.runAt > now);
    for (const e of due) e.live = false;
    return due.map((e) => e.value);
  }

  nextDeadline(): number | undefined {
    if (this.entries.length === 0) return undefined;
    const min = Math.min(...this.entries.map((e) => e.runAt));
    return Math.ceil(min / this.tickMs) * this.tickMs;
  }
}
