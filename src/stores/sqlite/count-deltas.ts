import type { TaskState } from '../../core/task/model.js';

/**
 * Changes to the per-(topic, state) counters made by one write, summed in memory and
 * written once per transaction: a batch of 1,000 schedules costs one counter upsert, not
 * 1,000, and stats() reads a handful of rows however many tasks there are.
 */
export class CountDeltas {
  private readonly deltas = new Map<string, { topic: string; state: TaskState; n: number }>();

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

  mergeInto(target: CountDeltas): void {
    for (const { topic, state, n } of this.deltas.values()) target.add(topic, state, n);
  }

  *entries(): IterableIterator<{ readonly topic: string; readonly state: TaskState; readonly n: number }> {
    for (const entry of this.deltas.values()) if (entry.n !== 0) yield entry;
  }
}
