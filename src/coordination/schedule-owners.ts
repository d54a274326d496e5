/**
 * Recurring schedules planned by the owner of their shard (the SchedulePlanning port): a
 * schedule id goes to a shard with the router tasks use (router.ts), and the process that
 * holds that shard's lease (ShardLeases, kept by the store's lease keeper) plans it.
 *
 * Example, 16 shards over three processes A (0-5), B (6-10), C (11-15): schedule `nightly`
 * hashes to shard 7, so only B plans it. B dies; its leases run out and, at their next
 * lease tick, A and C take shards 6-10 (within `takeoverMs` of B's death); the one that
 * takes shard 7 is told (onChange(7, true)), re-reads `nightly` from the store and plans
 * it, creating the occurrences B did not create meanwhile.
 */
import type { SchedulePlanning } from '../core/ports/index.js';
import { shardOf } from './router.js';
import type { ShardLeases } from './shard-leases.js';

export class ScheduleOwners implements SchedulePlanning {
  private readonly listeners: ((partition: number, owned: boolean) => void)[] = [];

  constructor(
    private readonly leases: ShardLeases,
    private readonly shards: number,
    readonly takeoverMs: number,
  ) {
    // The engine registers once the store has opened: the leases its first tick took are no change.
    leases.watch((shard, held) => {
      for (const listener of this.listeners) listener(shard, held);
    });
  }

  partitionOf(scheduleId: string): number {
    return shardOf(scheduleId, this.shards);
  }

  owns(partition: number): boolean {
    return this.leases.owns(partition);
  }

  onChange(listener: (partition: number, owned: boolean) => void): void {
    this.listeners.push(listener);
  }
}
