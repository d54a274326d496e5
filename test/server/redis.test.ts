// End to end on Redis: the real `delayq serve`, its store given by URL, on a redis-server and
// on a 3-master Redis Cluster that the test starts itself. The namespace comes from the
// URL's query, so two services (tenants) share one Redis without seeing each other's tasks.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DelayQClient } from '../../src/client/index.js';
import { spawnServer } from '../helpers/service-process.js';
import { redisSkip, startCluster, startRedis, type RedisCluster, type RedisServer } from '../helpers/redis-servers.js';

const skip = redisSkip();

describe('delayq serve on Redis (spawned)', { skip }, () => {
  let redis: RedisServer | undefined;
  let cluster: RedisCluster | undefined;

  before(async () => {
    [redis, cluster] = await Promise.all([startRedis(), startCluster(3)]);
  });

  after(async () => {
    await redis?.stop();
    redis?.remove();
    await cluster?.stop();
  });

  it('serves two tenants on one Redis, each in the namespace its store URL names', { timeout: 60_000 }, async () => {
    const storeA = `${redis!.url}?prefix=tenant-a`;
    const storeB = `${redis!.url}?prefix=tenant-b&shards=4`;
    const [a, b] = await Promise.all([spawnServer(['--store', storeA]), spawnServer(['--store', storeB])]);
    try {
      const clientA = new DelayQClient({ url: a.address });
      const clientB = new DelayQClient({ url: b.address });
      assert.deepEqual([(await clientA.stats()).store, (await clientB.stats()).store], ['redis:tenant-a', 'redis:tenant-b']);
      // The same id in both: two tasks, one per namespace.
      assert.equal((await clientA.schedule({ id: 'order-7', topic: 'orders', payload: { tenant: 'a' } })).created, true);
      assert.equal((await clientB.schedule({ id: 'order-7', topic: 'orders', payload: { tenant: 'b' }, delayMs: 3_600_000 })).created, true);
      assert.deepEqual((await clientA.get('order-7'))?.payload, { tenant: 'a' });
      assert.deepEqual((await clientB.get('order-7'))?.payload, { tenant: 'b' });

      const [delivery] = await clientA.reserve('orders', { waitMs: 5_000 });
      assert.deepEqual([delivery?.id, delivery?.payload], ['order-7', { tenant: 'a' }]);
      await clientA.ack(delivery!.id, delivery!.receipt);
      assert.equal((await clientA.get('order-7'))?.state, 'completed');
      // B's task is an hour away, and A's completed task is not B's.
      assert.deepEqual(await clientB.reserve('orders', { waitMs: 300 }), []);
      assert.equal((await clientB.get('order-7'))?.state, 'pending');
      assert.equal((await clientB.stats()).counts.completed, 0);
    } finally {
      assert.deepEqual(await Promise.all([a.stop(), b.stop()]), [0, 0]);
    }
  });

  it('serves on a Redis Cluster given as redis+cluster://, across a restart of the service', { timeout: 60_000 }, async () => {
    const store = `${cluster!.url}?prefix=svc`;
    const first = await spawnServer(['--store', store]);
    let client = new DelayQClient({ url: first.address });
    try {
      const results = await client.scheduleMany(Array.from({ length: 50 }, (_, i) => ({ id: `c-${i}`, topic: 'mail', payload: { i }, delayMs: i < 25 ? 0 : 3_600_000 })));
      assert.equal(results.filter((r) => 'created' in r && r.created).length, 50);
      const delivered = new Set<string>();
      for (let round = 0; round < 20 && delivered.size < 25; round++) {
        const batch = await client.reserve('mail', { max: 50, waitMs: 1_000 });
        for (const d of batch) {
          delivered.add(d.id);
          await client.ack(d.id, d.receipt);
        }
      }
      assert.equal(delivered.size, 25);
    } finally {
      assert.equal(await first.stop(), 0);
    }
    const again = await spawnServer(['--store', store]);
    try {
      client = new DelayQClient({ url: again.address });
      const stats = await client.stats();
      assert.deepEqual([stats.counts.completed, stats.counts.pending], [25, 25]);
      assert.equal((await client.get('c-49'))?.state, 'pending');
    } finally {
      assert.equal(await again.stop(), 0);
    }
  });
});
