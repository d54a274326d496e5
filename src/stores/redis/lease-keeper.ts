/**
 * Shard ownership between the processes that share a namespace. Each shard has a lease
 * (SET NX PX with a fencing token, renewed by compare-and-set); the holder alone keeps
 * the shard's timers in its wheel and promotes its due tasks (promote.lua checks the
 * token, so a process that lost its lease without noticing cannot act on the shard).
 *
 * Every tick (leaseMs / 5) the keeper records a heartbeat in the members ZSET, derives its
 * fair share ceil(shards / live processes), renews what it holds, gives up shards above
 * its share (so a newcomer gets some) and takes free ones below it. A process that dies
 * stops renewing. Its leases and heartbeat are set to run out one tick short of leaseMs
 * after its last tick, so the others, on their next tick, have taken its shards within
 * leaseMs of its death (before: up to leaseMs plus a tick, ~6 s by default).
 */
import type { RedisClient } from './connection.js';
import type { Keyspace } from './keys.js';
import { leaseAcquireScript, leaseReleaseScript, leaseRenewScript } from './commands.js';
import { shardOf } from './router.js';

export interface LeaseEvents {
  /** This process now owns `shard` (not called for the shards taken by start()). */
  acquired(shard: number): void;
  lost(shard: number): void;
  /** Runs after each tick, with the shards held (the store's recoverer). */
  afterTick(owned: readonly number[]): Promise<void>;
  error(error: unknown): void;
}

export class LeaseKeeper {
  private readonly held = new Map<number, string>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private ticking: Promise<void> | null = null;
  private started = false;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keyspace,
    readonly owner: string,
    private readonly leaseMs: number,
    /** Wall-clock time for heartbeats; processes on one namespace need roughly synced clocks. */
    private readonly now: () => number,
    private readonly events: LeaseEvents,
  ) {}

  /** Between two ticks. */
  private get tickMs(): number {
    return Math.max(50, Math.floor(this.leaseMs / 5));
  }

  /** How long a lease or heartbeat outlives the tick that set it (see the header). */
  get ttlMs(): number {
    return this.leaseMs - this.tickMs;
  }

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

  /** Called when a script found the lease gone (taken over after a stall). */
  markLost(shard: number): void {
    if (this.held.delete(shard)) this.events.lost(shard);
  }

  /** Takes this process's share before returning, so a lone process owns every shard at once. */
  async start(): Promise<void> {
    this.running = true;
    await this.tick();
    this.started = true;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
    // A clean stop hands the shards over at once instead of after the lease runs out.
    await Promise.allSettled([...this.held].map(([shard, value]) => leaseReleaseScript(this.client, this.keys.shards[shard]!, value)));
    this.held.clear();
    await this.client.zrem(this.keys.members, this.owner).catch(() => undefined);
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.ticking = this.tick()
        .catch((error: unknown) => this.events.error(error))
        .finally(() => this.schedule());
    }, this.tickMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const now = this.now();
    const shardCount = this.keys.shards.length;
    await this.client.zadd(this.keys.members, now + this.ttlMs, this.owner);
    await this.client.zremrangebyscore(this.keys.members, '-inf', `(${now}`);
    const live = Math.max(1, await this.client.zcard(this.keys.members));
    const share = Math.ceil(shardCount / live);

    const renewals = await Promise.all(
      [...this.held].map(async ([shard, value]) => [shard, await leaseRenewScript(this.client, this.keys.shards[shard]!, value, this.ttlMs)] as const),
    );
    for (const [shard, renewed] of renewals) if (!renewed) this.markLost(shard);

    if (this.held.size > share) {
      for (const shard of this.owned().slice(share)) {
        const value = this.held.get(shard)!;
        this.held.delete(shard);
        this.events.lost(shard);
        await leaseReleaseScript(this.client, this.keys.shards[shard]!, value);
      }
    }
    if (this.held.size < share) {
      // Start at a different shard per process, so newcomers do not all race for shard 0.
      const offset = shardOf(this.owner, shardCount);
      for (let i = 0; i < shardCount && this.held.size < share && this.running; i++) {
        const shard = (offset + i) % shardCount;
        if (this.held.has(shard)) continue;
        const value = await leaseAcquireScript(this.client, this.keys.shards[shard]!, this.owner, this.ttlMs);
        if (value === null) continue;
        this.held.set(shard, value);
        if (this.started) this.events.acquired(shard);
      }
    }
    await this.events.afterTick(this.owned());
  }
}
