/**
 * Shard leases against a real redis-server: how long a lease outlives its holder, and a
 * takeover when the holder stops renewing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { buildKeyspace } from '../../../src/stores/redis/keys.js';
import { LeaseKeeper, type LeaseEvents } from '../../../src/stores/redis/lease-keeper.js';
import { ShardLeases } from '../../../src/coordination/shard-leases.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { redisSkip, startRedis, type RedisServer } from '../../helpers/redis-servers.js';

const skip = redisSkip();
const SHARDS = 16;

const quiet = (): LeaseEvents => ({ acquired: () => undefined, afterTick: async () => undefined, error: () => undefined, healthy: () => undefined });
const leasesOf = (owner: string): ShardLeases => new ShardLeases(owner, () => undefined);

describe('redis shard leases', { skip }, () => {
  let server: RedisServer;
  const clients: Redis[] = [];
  // Without an offline queue, so that commands of a disconnected ("dead") client fail at once.
  const client = async (): Promise<Redis> => {
    const c = new Redis(server.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
    clients.push(c);
    await c.connect();
    return c;
  };

  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    for (const c of clients) c.disconnect();
    await server.stop();
    server.remove();
  });

  it('sets leases and the heartbeat to run out a tick short of leaseMs, so a dead holder is replaced within leaseMs', async () => {
    const keys = buildKeyspace('ttl', SHARDS);
    const admin = await client();
    const leaseMs = 5_000;
    const keeper = new LeaseKeeper(await client(), keys, leasesOf('a'), leaseMs, storeSystemClock, quiet());
    const before = Date.now();
    await keeper.start();
    assert.equal(keeper.leases.owned().length, SHARDS);
    assert.equal(keeper.ttlMs, 4_000);
    for (const shard of keys.shards) {
      const ttl = await admin.pttl(shard.lease);
      // Set by the tick just run: at most ttlMs, less the time since.
      assert.ok(ttl > 0 && ttl <= keeper.ttlMs, `lease of shard ${shard.index}: pttl ${ttl}`);
    }
    const heartbeat = Number(await admin.zscore(keys.members, 'a'));
    assert.ok(heartbeat >= before + keeper.ttlMs && heartbeat <= Date.now() + keeper.ttlMs, `heartbeat ${heartbeat - before}`);
    await keeper.stop();
  });

  it("takes over a silent holder's shards once its leases run out, and its fencing tokens no longer match", async () => {
    const keys = buildKeyspace('takeover', SHARDS);
    const leaseMs = 500;
    const deadClient = await client();
    const dead = new LeaseKeeper(deadClient, keys, leasesOf('dead'), leaseMs, storeSystemClock, quiet());
    await dead.start();
    const tokens = dead.leases.owned().map((shard) => dead.leases.leaseValue(shard));
    // A crash: no more renewals, no release.
    deadClient.disconnect();
    const diedAt = Date.now();

    const acquired: number[] = [];
    const survivor = new LeaseKeeper(await client(), keys, leasesOf('survivor'), leaseMs, storeSystemClock, { ...quiet(), acquired: (shard) => acquired.push(shard) });
    await survivor.start();
    while (survivor.leases.owned().length < SHARDS && Date.now() - diedAt < 10 * leaseMs) await sleep(20);
    assert.equal(survivor.leases.owned().length, SHARDS, 'the survivor holds every shard');
    assert.deepEqual([...acquired].sort((a, b) => a - b), [...keys.shards.keys()], 'each taken over shard is reported (the store loads it)');
    for (const shard of survivor.leases.owned()) assert.ok(!tokens.includes(survivor.leases.leaseValue(shard)), `shard ${shard} has a new fencing token`);
    await survivor.stop();
    await dead.stop();
  });
});
