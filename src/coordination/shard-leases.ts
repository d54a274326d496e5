/**
 * The shard leases this process holds, with their fencing tokens: written by the lease
 * keeper (lease-keeper.ts), read by every part that acts on owned shards only (promotion,
 * the timers channel, the recoverer, loadDue). Built first in the composition root, so
 * those parts and the keeper share it without referring to each other.
 */
export class ShardLeases {
  private readonly held = new Map<number, string>();
  private readonly watchers: ((shard: number, held: boolean) => void)[] = [];

  constructor(
    /** This process's id among those sharing the namespace (heartbeats, wakeup messages). */
    readonly owner: string,
    /** A held shard was given up or found taken over. */
    private readonly onLost: (shard: number) => void,
  ) {}

  owns(shard: number): boolean {
    return this.held.has(shard);
  }

  /** The fencing token of a held shard. */
  leaseValue(shard: number): string | undefined {
    return this.held.get(shard);
  }

  owned(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b);
  }

  get size(): number {
    return this.held.size;
  }

  /** [shard, token] of every held lease. */
  entries(): [number, string][] {
    return [...this.held];
  }

  /** Registers a receiver of every change: a shard taken (held true) or no longer ours (false). */
  watch(watcher: (shard: number, held: boolean) => void): void {
    this.watchers.push(watcher);
  }

  hold(shard: number, value: string): void {
    const renewed = this.held.has(shard);
    this.held.set(shard, value);
    if (!renewed) for (const watcher of this.watchers) watcher(shard, true);
  }

  /** The lease is no longer ours (given up, or a script found it gone after a stall). */
  markLost(shard: number): void {
    if (!this.held.delete(shard)) return;
    this.onLost(shard);
    for (const watcher of this.watchers) watcher(shard, false);
  }

  /** Forgets every lease without reporting them (a clean stop released them). */
  clear(): void {
    this.held.clear();
  }
}
