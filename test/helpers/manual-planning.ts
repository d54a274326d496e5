/**
 * A SchedulePlanning the test drives: which partitions this process owns, changed by
 * `take` and `give` (which notify as a store's lease keeper would). The partition of an id
 * is the store router's, over `partitions`.
 */
import type { SchedulePlanning } from '../../src/core/ports/index.js';
import { shardOf } from '../../src/coordination/router.js';

export class ManualPlanning implements SchedulePlanning {
  private readonly owned: Set<number>;
  private readonly listeners: ((partition: number, owned: boolean) => void)[] = [];

  constructor(
    readonly partitions: number,
    readonly takeoverMs: number,
    owned: Iterable<number> = Array.from({ length: partitions }, (_, i) => i),
  ) {
    this.owned = new Set(owned);
  }

  partitionOf(scheduleId: string): number {
    return shardOf(scheduleId, this.partitions);
  }

  owns(partition: number): boolean {
    return this.owned.has(partition);
  }

  onChange(listener: (partition: number, owned: boolean) => void): void {
    this.listeners.push(listener);
  }

  take(partition: number): void {
    this.owned.add(partition);
    for (const listener of this.listeners) listener(partition, true);
  }

  give(partition: number): void {
    this.owned.delete(partition);
    for (const listener of this.listeners) listener(partition, false);
  }
}
