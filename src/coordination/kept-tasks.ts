/**
 * Tasks reserved for this process's consumers but not handed to one yet (promote reserved
 * them for a consumer that was asking, or a reserve call brought more than its caller
 * wanted), per topic, oldest first. Each remembers when it was kept: only the ones kept
 * longer than the keep time go back to the shared lists (kept-releaser.ts), not the whole
 * topic, whose newest would then wait for another reserve call (ADR 0009).
 */
import type { TaskRecord } from '../core/task/model.js';

interface Kept {
  readonly record: TaskRecord;
  readonly at: number;
}

export class KeptTasks {
  private readonly byTopic = new Map<string, Kept[]>();

  add(topic: string, records: readonly TaskRecord[], at: number): void {
    if (records.length === 0) return;
    let list = this.byTopic.get(topic);
    if (!list) this.byTopic.set(topic, (list = []));
    for (const record of records) list.push({ record, at });
  }

  /**
   * Puts `records` ahead of the kept ones (they were due earlier: a background reserve's
   * backlog). They count as kept since the oldest of those already kept, so the release
   * of the oldest first still finds them in order.
   */
  addFirst(topic: string, records: readonly TaskRecord[], at: number): void {
    if (records.length === 0) return;
    let list = this.byTopic.get(topic);
    if (!list) this.byTopic.set(topic, (list = []));
    const since = Math.min(at, list[0]?.at ?? at);
    list.unshift(...records.map((record) => ({ record, at: since })));
  }

  /**
   * As `addFirst` for a topic with priorities (ADR 0057): `records` go ahead of the kept ones
   * of their priority and of lower ones, behind those of higher ones; each side keeps its order.
   */
  addByPriority(topic: string, records: readonly TaskRecord[], at: number): void {
    if (records.length === 0) return;
    const list = this.byTopic.get(topic) ?? [];
    const since = Math.min(at, list[0]?.at ?? at);
    const level = (record: TaskRecord): number => record.priority ?? 0;
    const coming = records.map((record) => ({ record, at: since })).sort((a, b) => level(b.record) - level(a.record));
    const merged: Kept[] = [];
    let i = 0;
    let j = 0;
    while (i < coming.length || j < list.length) {
      if (j >= list.length || (i < coming.length && level(coming[i]!.record) >= level(list[j]!.record))) merged.push(coming[i++]!);
      else merged.push(list[j++]!);
    }
    this.byTopic.set(topic, merged);
  }

  size(topic: string): number {
    return this.byTopic.get(topic)?.length ?? 0;
  }

  /** Up to `max` of the oldest. */
  handOut(topic: string, max: number): TaskRecord[] {
    const list = this.byTopic.get(topic);
    if (!list) return [];
    const taken = list.splice(0, max);
    if (list.length === 0) this.byTopic.delete(topic);
    return taken.map((k) => k.record);
  }

  /** Removes and returns the ones kept at or before `cutoff`. */
  handBackKeptBy(topic: string, cutoff: number): TaskRecord[] {
    const list = this.byTopic.get(topic);
    if (!list) return [];
    let n = 0;
    while (n < list.length && list[n]!.at <= cutoff) n++;
    return this.handOut(topic, n);
  }

  /** When the oldest of `topic` was kept; undefined when none is. */
  oldestAt(topic: string): number | undefined {
    return this.byTopic.get(topic)?.[0]?.at;
  }

  topics(): string[] {
    return [...this.byTopic.keys()];
  }
}
