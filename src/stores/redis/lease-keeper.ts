/**
 * Shard leases on Redis: each shard's lease is a key set with NX PX and a fencing token
 * (lease-acquire.lua), renewed by compare-and-set (lease-renew.lua); heartbeats are the
 * members ZSET and the processes' join times (their rank for the shares) the joined ZSET,
 * both written by heartbeat.lua. The loop itself (fair shares, renewals, takeover timing) is
 * the shared one, src/coordination/lease-keeper.ts; promote.lua checks the token, so a
 * process that lost its lease without noticing cannot act on the shard.
 */
import type { Clock } from '../../core/ports/index.js';
import { SharedLeaseKeeper, type LeaseBackend, type LeaseEvents } from '../../coordination/lease-keeper.js';
import type { ShardLeases } from '../../coordination/shard-leases.js';
import type { RedisClient } from './connection.js';
import { heartbeatScript, leaseAcquireScript, leaseReleaseScript, leaseRenewScript } from './dispatch-commands.js';
import type { Keyspace } from './keys.js';
import { call } from './plain-commands.js';

export type { LeaseEvents } from '../../coordination/lease-keeper.js';

export function redisLeaseBackend(client: RedisClient, keys: Keyspace): LeaseBackend {
  return {
    shardCount: keys.shards.length,
    heartbeat: (owner, now, until) => heartbeatScript(client, keys, owner, now, until),
    // Redis runs the lease out itself (PX): `now` is not needed.
    acquire: (shard, owner, _now, ttlMs) => leaseAcquireScript(client, keys.shards[shard]!, owner, ttlMs),
    renew: (shard, token, _now, ttlMs) => leaseRenewScript(client, keys.shards[shard]!, token, ttlMs),
    release: (shard, token) => leaseReleaseScript(client, keys.shards[shard]!, token),
    leave: async (owner) => {
      await call(() => client.zrem(keys.members, owner));
      await call(() => client.zrem(keys.joined, owner));
    },
  };
}

/** The shared lease loop over Redis keys. */
export class LeaseKeeper extends SharedLeaseKeeper {
  constructor(client: RedisClient, keys: Keyspace, leases: ShardLeases, leaseMs: number, clock: Clock, events: LeaseEvents) {
    super(redisLeaseBackend(client, keys), leases, leaseMs, clock, events);
  }
}
