/**
 * Shard leases and heartbeats in this process's memory: the LeaseBackend contract with no
 * I/O, for the lease conformance suite (src/testing/lease-conformance.ts) on a ManualClock,
 * and for a store several engines in one process share. Every call is one synchronous step,
 * so it is atomic; times are the `now` passed in, as PostgreSQL's rows have them.
 * `backing.backend()` hands out a view per engine; all views see one backing.
 */
import type { Heartbeat, LeaseBackend } from './lease-keeper.js';

interface Lease {
  owner: string | null;
  /** The fencing token: moves on with every acquisition, never back. */
  token: number;
  expiresAt: number;
}

interface Member {
  expiresAt: number;
  joinedAt: number;
}

/** Orders owner ids as bytes (UTF-8), as the other backends do (Redis, COLLATE "C"). */
const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

export class MemoryLeaseBacking {
  private readonly leases: Lease[];
  private readonly members = new Map<string, Member>();

  constructor(readonly shardCount: number) {
    this.leases = Array.from({ length: shardCount }, () => ({ owner: null, token: 0, expiresAt: 0 }));
  }

  /** A view of the backing, as one process's connection would be. */
  backend(): LeaseBackend {
    return {
      shardCount: this.shardCount,
      heartbeat: async (owner, now, until) => this.heartbeat(owner, now, until),
      acquire: async (shard, owner, now, ttlMs) => this.acquire(shard, owner, now, ttlMs),
      renew: async (shard, token, now, ttlMs) => this.renew(shard, token, now, ttlMs),
      release: async (shard, token) => this.release(shard, token),
      leave: async (owner) => void this.members.delete(owner),
    };
  }

  private heartbeat(owner: string, now: number, until: number): Heartbeat {
    for (const [other, member] of this.members) if (other !== owner && member.expiresAt < now) this.members.delete(other);
    const own = this.members.get(owner);
    const joinedAt = own?.joinedAt ?? now;
    this.members.set(owner, { expiresAt: until, joinedAt });
    let live = 1;
    let rank = 0;
    for (const [other, member] of this.members) {
      if (other === owner || member.expiresAt < now) continue;
      live++;
      if (member.joinedAt < joinedAt || (member.joinedAt === joinedAt && byBytes(other, owner) < 0)) rank++;
    }
    return { live, rank };
  }

  private lease(shard: number): Lease {
    const lease = this.leases[shard];
    if (lease === undefined) throw new RangeError(`no shard ${shard} of ${this.shardCount}`);
    return lease;
  }

  private acquire(shard: number, owner: string, now: number, ttlMs: number): string | null {
    const lease = this.lease(shard);
    if (lease.owner !== null && lease.expiresAt > now) return null;
    lease.owner = owner;
    lease.token++;
    lease.expiresAt = now + ttlMs;
    return String(lease.token);
  }

  private renew(shard: number, token: string, now: number, ttlMs: number): boolean {
    const lease = this.lease(shard);
    if (lease.owner === null || String(lease.token) !== token || lease.expiresAt <= now) return false;
    lease.expiresAt = now + ttlMs;
    return true;
  }

  private release(shard: number, token: string): void {
    const lease = this.lease(shard);
    if (lease.owner !== null && String(lease.token) === token) {
      lease.owner = null;
      lease.expiresAt = 0;
    }
  }
}
