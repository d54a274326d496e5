/**
 * Shard leases against a real redis-server: how long a lease outlives its holder, the
 * shares (by the order the processes joined), and a takeover when the holder stops renewing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { buildKeyspace } from '../../../src/stores/redis/keys.js';
import { LeaseKeeper, redisLeaseBackend, type LeaseEvents } from '../../../src/stores/redis/lease-keeper.js';
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

  it('ranks the processes by when they joined, ties by owner id, one with no join time first; forgets the run-out ones', async () => {
    const keys = buildKeyspace('rank', SHARDS);
    const admin = await client();
    const backend = redisLeaseBackend(await client(), keys);
    const far = 10_000_000;
    assert.deepEqual(await backend.heartbeat('z', 1_000, far), { live: 1, rank: 0 });
    assert.deepEqual(await backend.heartbeat('m', 2_000, far), { live: 2, rank: 1 }, 'a newcomer ranks after z, whose id sorts after its own');
    assert.deepEqual(await backend.heartbeat('a', 2_000, far), { live: 3, rank: 1 }, 'joined with m: first by id');
    assert.deepEqual(await backend.heartbeat('z', 3_000, far), { live: 3, rank: 0 }, 'z keeps its join time');
    assert.deepEqual(await backend.heartbeat('m', 3_000, far), { live: 3, rank: 2 });
    // A process of a delayq before join times writes its heartbeat only: it counts as first.
    await admin.zadd(keys.members, far, 'old');
    assert.deepEqual(await backend.heartbeat('z', 4_000, far), { live: 4, rank: 1 });
    await admin.zrem(keys.members, 'old');
    // a's heartbeat runs out: it is forgotten with its join time, and joins anew as the last.
    await admin.zadd(keys.members, 4_500, 'a');
    assert.deepEqual(await backend.heartbeat('m', 5_000, far), { live: 2, rank: 1 });
    assert.equal(await admin.zscore(keys.joined, 'a'), null, "a's join time is gone with its heartbeat");
    assert.deepEqual(await backend.heartbeat('a', 6_000, far), { live: 3, rank: 2 });
    await backend.leave('a');
    assert.deepEqual([await admin.zscore(keys.members, 'a'), await admin.zscore(keys.joined, 'a')], [null, null], 'a clean stop leaves neither');
    assert.equal(Number(await admin.zscore(keys.joined, 'z')), 1_000);
  });

  it('shares 16 shards between three processes as 6, 5 and 5, the one over to the first to join whatever the ids', async () => {
    const keys = buildKeyspace('balance', SHARDS);
    const keepers: LeaseKeeper[] = [];
    try {
      for (const owner of ['c', 'a', 'b']) {
        const keeper = new LeaseKeeper(await client(), keys, leasesOf(owner), 500, storeSystemClock, quiet());
        keepers.push(keeper);
        await keeper.start();
        await sleep(5); // joined at different milliseconds: the rank is by join time, not by id
      }
      const sizes = (): number[] => keepers.map((k) => k.leases.owned().length);
      const settled = (): boolean => sizes().reduce((a, b) => a + b, 0) === SHARDS && sizes().every((n) => n === 5 || n === 6);
      const deadline = Date.now() + 10_000;
      while (!settled() && Date.now() < deadline) await sleep(20);
      // c joined first, so it holds the one shard over 15 though a sorts first by id.
      assert.deepEqual(sizes(), [6, 5, 5]);
      const held = keepers.flatMap((k) => k.leases.owned());
      assert.equal(new Set(held).size, SHARDS, 'every shard held once');
    } finally {
      for (const keeper of keepers) await keeper.stop();
    }
  });

  it('one shard: a newcomer whose id sorts first never takes it from its holder (test/stores/redis/lost-timer.test.ts)', async () => {
    const keys = buildKeyspace('one', 1);
    const leaseMs = 250; // a tick every 50 ms
    const holder = new LeaseKeeper(await client(), keys, leasesOf('z'), leaseMs, storeSystemClock, quiet());
    const newcomer = new LeaseKeeper(await client(), keys, leasesOf('a'), leaseMs, storeSystemClock, quiet());
    try {
      await holder.start();
      assert.deepEqual(holder.leases.owned(), [0]);
      const token = holder.leases.leaseValue(0);
      await sleep(5);
      await newcomer.start();
      // Twenty ticks of each: the holder never lets go, the newcomer never holds it.
      for (let i = 0; i < 40; i++) {
        assert.deepEqual([holder.leases.owned(), newcomer.leases.owned()], [[0], []], `after ${i * 25} ms`);
        await sleep(25);
      }
      assert.equal(holder.leases.leaseValue(0), token, 'the same lease all along');
      // Once the holder stops, the newcomer takes the shard.
      await holder.stop();
      const deadline = Date.now() + 5_000;
      while (newcomer.leases.owned().length === 0 && Date.now() < deadline) await sleep(10);
      assert.deepEqual(newcomer.leases.owned(), [0]);
    } finally {
      await newcomer.stop();
      await holder.stop();
    }
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
