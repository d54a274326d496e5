/**
 * Shard ownership between the processes that share a namespace, whatever holds the leases
 * (Redis keys, PostgreSQL rows): the loop, with the backing behind `LeaseBackend`. Each
 * shard has a lease with a fencing token, renewed only while the token is still the one
 * this process was given; the holder alone keeps the shard's timers in its wheel.
 *
 * Every tick (leaseMs / 5) the keeper records a heartbeat, derives its fair share, renews
 * what it holds, gives up shards above its share (so a newcomer gets some) and takes free
 * ones below it. The shares add up to the shards exactly: floor(shards / live) each, and one
 * more for the first (shards mod live) processes in the order they joined (their rank: by
 * first heartbeat, ties by owner id, from the heartbeat). 16 shards over 3 processes are 6,
 * 5 and 5, never 6, 6 and 4 as ceil(16 / 3) for each allowed. A newcomer ranks last, so the
 * shares of the processes already there do not grow when it joins: it never takes a shard
 * from a holder that is within its share (one shard, two processes: the first keeps it),
 * and a holder gives shards up only once the heartbeat it reads counts the newcomer.
 * A process that dies stops renewing.
 * Its leases and heartbeat are set to run out one tick short of leaseMs after its last
 * tick, so the others, on their next tick, have taken its shards within leaseMs of its death.
 *
 *   leaseMs 5,000: tick 1,000, ttl 4,000. A dies at t (last tick t - e, e < 1,000): its
 *   leases run out at t - e + 4,000; B's next tick after that takes them, by t + 5,000.
 */
import type { Clock, TimerToken } from '../core/ports/index.js';
import { shardOf } from './router.js';
import type { ShardLeases } from './shard-leases.js';

/** Where leases and heartbeats are kept; each call one atomic step on the backing. */
export interface LeaseBackend {
  readonly shardCount: number;
  /**
   * Records this process alive until `until` (and forgets the others that are not at `now`),
   * and when it joined (`now` at its first heartbeat; kept while it stays alive): how many are
   * alive, this one included, and how many of the others joined before it (its rank; at the
   * same time, those whose owner id sorts first as bytes; those that recorded no join time,
   * an older delayq, count as before it).
   */
  heartbeat(owner: string, now: number, until: number): Promise<Heartbeat>;
  /** Takes `shard` if free (never held, released, or run out at `now`) until now + ttlMs: its new fencing token, or null. */
  acquire(shard: number, owner: string, now: number, ttlMs: number): Promise<string | null>;
  /** Extends the lease held with `token`; false when it is no longer that token's. */
  renew(shard: number, token: string, now: number, ttlMs: number): Promise<boolean>;
  /** Gives up the lease held with `token` (nothing if it is not). */
  release(shard: number, token: string): Promise<void>;
  /** Forgets this process's heartbeat (a clean stop). */
  leave(owner: string): Promise<void>;
}

export interface Heartbeat {
  readonly live: number;
  readonly rank: number;
}

/** This process's share of `shardCount` shards when it has `rank` among `live` processes: the shares add up to shardCount. */
export function fairShare(shardCount: number, { live, rank }: Heartbeat): number {
  return Math.floor(shardCount / live) + (rank < shardCount % live ? 1 : 0);
}

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

export class SharedLeaseKeeper {
  private timer: TimerToken | null = null;
  private running = false;
  private ticking: Promise<void> | null = null;
  private started = false;
  /** Live processes and this one's rank among them at the last heartbeat that worked. */
  private beat: Heartbeat = { live: 1, rank: 0 };
  /** When each held lease was last set or renewed. */
  private readonly renewedAt = new Map<number, number>();

  constructor(
    private readonly backend: LeaseBackend,
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
    await Promise.allSettled(this.leases.entries().map(([shard, token]) => this.backend.release(shard, token)));
    this.leases.clear();
    await this.backend.leave(this.leases.owner).catch(() => undefined);
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
   * One tick. Each shard's lease is its own call, so a shard whose backing is away (a Redis
   * master down) costs only that shard: its renewal failing keeps the lease held until it
   * must have run out (ttlMs after the last renewal), then it is given up; nobody else can
   * take it meanwhile either. While the heartbeat fails, the last known share holds. Every
   * failure is reported once per tick (events.error); the rest of the tick goes on.
   */
  private async tick(): Promise<void> {
    const now = this.clock.now();
    const { leases, backend } = this;
    const shardCount = backend.shardCount;
    const errors: unknown[] = [];
    try {
      const { live, rank } = await backend.heartbeat(leases.owner, now, now + this.ttlMs);
      const counted = Math.max(1, live);
      this.beat = { live: counted, rank: Math.min(Math.max(0, rank), counted - 1) };
    } catch (error) {
      errors.push(error);
    }
    const share = fairShare(shardCount, this.beat);

    const held = leases.entries();
    const renewals = await Promise.allSettled(held.map(([shard, token]) => backend.renew(shard, token, now, this.ttlMs)));
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
        const token = leases.leaseValue(shard)!;
        leases.markLost(shard);
        await backend.release(shard, token).catch((error: unknown) => errors.push(error));
      }
    }
    if (leases.size < share) {
      // Start at a different shard per process, so newcomers do not all race for shard 0.
      const offset = shardOf(leases.owner, shardCount);
      for (let i = 0; i < shardCount && leases.size < share && this.running; i++) {
        const shard = (offset + i) % shardCount;
        if (leases.owns(shard)) continue;
        let token: string | null;
        try {
          token = await backend.acquire(shard, leases.owner, now, this.ttlMs);
        } catch (error) {
          errors.push(error);
          continue;
        }
        if (token === null) continue;
        leases.hold(shard, token);
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
