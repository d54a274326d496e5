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
import type { Clock, TimerToken } from '../../core/ports/index.js';
import type { RedisClient } from './connection.js';
import type { Keyspace } from './keys.js';
import { leaseAcquireScript, leaseReleaseScript, leaseRenewScript } from './dispatch-commands.js';
import { shardOf } from '../shared/router.js';
import type { ShardLeases } from '../shared/shard-leases.js';

export interface LeaseEvents {
  /** This process now owns `shard` (not called for the shards taken by start()). */
  acquired(shard: number): void;
  /** Runs after each tick, with the shards held (the store's recoverer). */
  afterTick(owned: readonly number[]): Promise<void>;
  /** A part of the tick failed (the first error of the tick). */
  error(error: unknown): void;
  /** Every part of the tick worked. */
  healthy(): void;
}

export class LeaseKeeper {
  private timer: TimerToken | null = null;
  private running = false;
  private ticking: Promise<void> | null = null;
  private started = false;
  /** Live processes at the last heartbeat that worked. */
  private live = 1;
  /** When each held lease was last set or renewed. */
  private readonly renewedAt = new Map<number, number>();

  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keyspace,
    /** What this process holds; the keeper is the only part that adds to it. */
    readonly leases: ShardLeases,
    private readonly leaseMs: number,
    /** Ticks, and wall-clock time for heartbeats (processes on one namespace need roughly synced clocks). */
    private readonly clock: Clock,
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

  /** Takes this process's share before returning, so a lone process owns every shard at once. */
  async start(): Promise<void> {
    this.running = true;
    await this.tick();
    this.started = true;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
    await this.ticking;
    // A clean stop hands the shards over at once instead of after the lease runs out.
    await Promise.allSettled(this.leases.entries().map(([shard, value]) => leaseReleaseScript(this.client, this.keys.shards[shard]!, value)));
    this.leases.clear();
    await this.client.zrem(this.keys.members, this.leases.owner).catch(() => undefined);
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = this.clock.setTimer(() => {
      this.timer = null;
      this.ticking = this.tick()
        .catch((error: unknown) => this.events.error(error))
        .finally(() => this.schedule());
    }, this.tickMs);
  }

  /**
   * One tick. Each shard's lease is its own call on its own shard, so a shard whose master
   * is away (a failover, a master down) costs only that shard: its renewal failing keeps
   * the lease held until it must have run out (ttlMs after the last renewal), then it is
   * given up; nobody else can take it meanwhile either, as its lease key is on that master.
   * The heartbeat lives on the meta shard: while it fails, the last known share holds.
   * Every failure is reported once per tick (events.error); the rest of the tick goes on.
   */
  private async tick(): Promise<void> {
    const now = this.clock.now();
    const shardCount = this.keys.shards.length;
    const { leases } = this;
    const errors: unknown[] = [];
    try {
      await this.client.zadd(this.keys.members, now + this.ttlMs, leases.owner);
      await this.client.zremrangebyscore(this.keys.members, '-inf', `(${now}`);
      this.live = Math.max(1, await this.client.zcard(this.keys.members));
    } catch (error) {
      errors.push(error);
    }
    const share = Math.ceil(shardCount / this.live);

    const held = leases.entries();
    const renewals = await Promise.allSettled(held.map(([shard, value]) => leaseRenewScript(this.client, this.keys.shards[shard]!, value, this.ttlMs)));
    renewals.forEach((result, i) => {
      const shard = held[i]![0];
      if (result.status === 'fulfilled') {
        if (result.value) this.renewedAt.set(shard, now);
        else leases.markLost(shard);
        return;
      }
      errors.push(result.reason);
      // Not renewed since it ran out: it is no longer ours, whoever may take it next.
      if (now - (this.renewedAt.get(shard) ?? now) >= this.ttlMs) leases.markLost(shard);
    });

    if (leases.size > share) {
      for (const shard of leases.owned().slice(share)) {
        const value = leases.leaseValue(shard)!;
        leases.markLost(shard);
        await leaseReleaseScript(this.client, this.keys.shards[shard]!, value).catch((error: unknown) => errors.push(error));
      }
    }
    if (leases.size < share) {
      // Start at a different shard per process, so newcomers do not all race for shard 0.
      const offset = shardOf(leases.owner, shardCount);
      for (let i = 0; i < shardCount && leases.size < share && this.running; i++) {
        const shard = (offset + i) % shardCount;
        if (leases.owns(shard)) continue;
        let value: string | null;
        try {
          value = await leaseAcquireScript(this.client, this.keys.shards[shard]!, leases.owner, this.ttlMs);
        } catch (error) {
          errors.push(error);
          continue;
        }
        if (value === null) continue;
        leases.hold(shard, value);
        this.renewedAt.set(shard, now);
        if (this.started) this.events.acquired(shard);
      }
    }
    for (const shard of this.renewedAt.keys()) if (!leases.owns(shard)) this.renewedAt.delete(shard);
    if (errors.length > 0) this.events.error(errors[0]);
    else this.events.healthy();
    await this.events.afterTick(leases.owned());
  }
}
