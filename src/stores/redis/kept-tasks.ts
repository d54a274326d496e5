/**
 * Tasks reserved for this process's consumers but not handed to one yet (promote reserved
 * them for a consumer that was asking, a take brought more than its caller wanted, or a
 * background take drained a list's backlog), per topic, in due order: by runAt, ties in
 * the order they came, as in the shards' lists. Whatever way a task came, a consumer gets the one due first.
 *
 * Each entry remembers since when it was kept. When consumers fall behind, the entries
 * kept KEEP_MS or longer are too many for them: that many go back to the shared lists
 * (`takeOverdue`), the ones due last, so that this process goes on with the ones due
 * first and the lists get the rest ahead of what falls due later. Giving back the oldest
 * instead (as until 2026-11-24) handed this process's consumers the newer ones first and
 * left the older ones in the lists behind them: a one-slot worker at twice its load
 * delivered every other task late and out of order.
 */
import type { TaskRecord } from '../../core/task/model.js';

interface Kept {
  readonly record: TaskRecord;
  /** When it was first kept. */
  readonly since: number;
  /** Since when it counts as kept (takeOverdue renews it for those that stay). */
  at: number;
}

export class KeptTasks {
  private readonly byTopic = new Map<string, Kept[]>();

  /** Keeps `records` since `at`, each in its due place. */
  add(topic: string, records: readonly TaskRecord[], at: number): void {
    if (records.length === 0) return;
    let list = this.byTopic.get(topic);
    if (!list) this.byTopic.set(topic, (list = []));
    if (records.length > SORT_BATCH) {
      // A take's reply or a drained backlog: append, then one stable sort.
      for (const record of records) list.push({ record, since: at, at });
      list.sort((a, b) => a.record.runAt - b.record.runAt);
      return;
    }
    for (const record of records) {
      const entry = { record, since: at, at };
      // Promotions come in due order per shard, so a task belongs at or near the end.
      if (list.length === 0 || !dueBefore(record, list[list.length - 1]!.record)) list.push(entry);
      else list.splice(placeOf(list, record), 0, entry);
    }
  }

  size(topic: string): number {
    return this.byTopic.get(topic)?.length ?? 0;
  }

  /** Up to `max`, the ones due first. */
  take(topic: string, max: number): TaskRecord[] {
    const list = this.byTopic.get(topic);
    if (!list) return [];
    const taken = list.splice(0, max);
    if (list.length === 0) this.byTopic.delete(topic);
    return taken.map((k) => k.record);
  }

  /**
   * As many as were kept at or before `cutoff`, taken from the end (due last), in due
   * order. Those of them that stay are counted as kept from `now`: consumers are still
   * at work on the ones before them. But none stays kept past `limit` (first kept at or
   * before it): a kept task's reservation is running, and one kept until its ttr ran out
   * would be delivered here after it had been delivered again elsewhere.
   */
  takeOverdue(topic: string, cutoff: number, now: number, limit: number): TaskRecord[] {
    const list = this.byTopic.get(topic);
    if (!list) return [];
    let overdue = 0;
    for (const entry of list) if (entry.at <= cutoff) overdue++;
    if (overdue === 0) return [];
    const taken: TaskRecord[] = [];
    const stay: Kept[] = [];
    // From the end: the `overdue` due last go back, and any kept too long since first kept.
    for (let i = list.length - 1; i >= 0; i--) {
      const entry = list[i]!;
      if (overdue > 0 || entry.since <= limit) {
        taken.push(entry.record);
        if (overdue > 0) overdue--;
      } else {
        if (entry.at <= cutoff) entry.at = now;
        stay.push(entry);
      }
    }
    if (stay.length === 0) this.byTopic.delete(topic);
    else this.byTopic.set(topic, stay.reverse());
    return taken.reverse();
  }

  /** Since when the longest-kept task of `topic` is kept; undefined when none is. */
  oldestAt(topic: string): number | undefined {
    const list = this.byTopic.get(topic);
    if (!list) return undefined;
    let oldest = Infinity;
    for (const entry of list) if (entry.at < oldest) oldest = entry.at;
    return oldest;
  }

  topics(): string[] {
    return [...this.byTopic.keys()];
  }
}

/** Ties keep the order they came in (a shard's list and a take's reply are in seq order). */
function dueBefore(a: TaskRecord, b: TaskRecord): boolean {
  return a.runAt < b.runAt;
}

/** Above this many records at once, `add` appends and sorts instead of inserting each. */
const SORT_BATCH = 64;

/** The index before which `record` belongs: after every entry not due after it. */
function placeOf(list: readonly Kept[], record: TaskRecord): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (dueBefore(record, list[mid]!.record)) high = mid;
    else low = mid + 1;
  }
  return low;
}
