import { PARKED_COUNT_GRAIN_MS } from '../../core/due-histogram.js';
import type { TaskState } from '../../core/task/model.js';

/**
 * Changes to the per-(topic, state) counters made by one write, summed in memory and
 * written once per transaction: a batch of 1,000 schedules costs one counter upsert, not
 * 1,000, and stats() reads a handful of rows however many tasks there are.
 */
const DAY_MS = 24 * PARKED_COUNT_GRAIN_MS;

/** Parked tasks of one topic and UTC day, per hour of the day (the row of parked_days). */
export interface ParkedDay {
  readonly day: number;
  readonly topic: string;
  readonly hours: Int32Array;
}

export class CountDeltas {
  private readonly deltas = new Map<string, { topic: string; state: TaskState; n: number }>();
  private readonly parkedDays = new Map<string, ParkedDay>();

  add(topic: string, state: TaskState, n: number): void {
    const key = `${state}\u0000${topic}`;
    const entry = this.deltas.get(key);
    if (entry) entry.n += n;
    else this.deltas.set(key, { topic, state, n });
  }

  move(topic: string, from: TaskState, to: TaskState): void {
    this.add(topic, from, -1);
    this.add(topic, to, +1);
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
    for (const { topic, state, n } of this.deltas.values()) target.add(topic, state, n);
    for (const { topic, day, hours } of this.parkedDays.values()) for (let h = 0; h < 24; h++) if (hours[h] !== 0) target.addParked(topic, day, h, hours[h]!);
  }

  parkedEntries(): IterableIterator<ParkedDay> {
    return this.parkedDays.values();
  }

  *entries(): IterableIterator<{ readonly topic: string; readonly state: TaskState; readonly n: number }> {
    for (const entry of this.deltas.values()) if (entry.n !== 0) yield entry;
  }
}
