import { PARKED_COUNT_GRAIN_MS } from '../../core/due-histogram.js';
import { nextState, type TaskEvent } from '../../core/task/lifecycle.js';
import type { TaskState } from '../../core/task/model.js';
import { CounterTally, type CounterDelta, type StateOrNone } from '../../core/task/counter-deltas.js';

/**
 * Changes to the per-(topic, state) counters made by one write (the deltas of
 * core/task/counter-deltas.ts), summed in memory and written once per transaction: a batch
 * of 1,000 schedules costs one counter upsert, not 1,000, and stats() reads a handful of
 * rows however many tasks there are. Beside them, the parked counts per hour.
 */
const DAY_MS = 24 * PARKED_COUNT_GRAIN_MS;

/** Parked tasks of one topic and UTC day, per hour of the day (the row of parked_days). */
export interface ParkedDay {
  readonly day: number;
  readonly topic: string;
  readonly hours: Int32Array;
}

export class CountDeltas {
  private readonly tally = new CounterTally();
  private readonly parkedDays = new Map<string, ParkedDay>();

  /** `times` tasks of `topic` moved from `from` to `to` (null: created, or purged). */
  moved(topic: string, from: StateOrNone, to: StateOrNone, times = 1): void {
    this.tally.add(topic, from, to, times);
  }

  /** A task of `topic` in `from` moved by `event` of the state machine (core/task/lifecycle.ts). */
  transition(topic: string, from: TaskState, event: TaskEvent): void {
    const to = nextState(from, event);
    // Callers decide first (core/task/decide.ts): a refused transition here is a bug of the store.
    if (to === undefined) throw new Error(`sqlite store: ${event} is not a transition from ${from}`);
    this.tally.add(topic, from, to);
  }

  /**
   * A new task parked beyond the frontier (migration 0009): counted in parked_days under its
   * topic, day and hour of runAt. Only inserts count here; triggers take parked rows out.
   */
  parked(topic: string, runAt: number): void {
    this.addParked(topic, Math.floor(runAt / DAY_MS), Math.floor(runAt / PARKED_COUNT_GRAIN_MS) % 24, 1);
  }

  private addParked(topic: string, day: number, hour: number, n: number): void {
    const key = `${day}\u0000${topic}`;
    let entry = this.parkedDays.get(key);
    if (entry === undefined) this.parkedDays.set(key, (entry = { day, topic, hours: new Int32Array(24) }));
    entry.hours[hour]! += n;
  }

  mergeInto(target: CountDeltas): void {
    this.tally.mergeInto(target.tally);
    for (const { topic, day, hours } of this.parkedDays.values()) for (let h = 0; h < 24; h++) if (hours[h] !== 0) target.addParked(topic, day, h, hours[h]!);
  }

  parkedEntries(): IterableIterator<ParkedDay> {
    return this.parkedDays.values();
  }

  entries(): IterableIterator<CounterDelta> {
    return this.tally.entries();
  }
}
