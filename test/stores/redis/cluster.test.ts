import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cluster } from 'ioredis';
import { openRedisStore } from '../../../src/stores/redis/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { buildKeyspace } from '../../../src/stores/redis/keys.js';
import { runSharedConformance } from '../../../src/testing/shared-conformance.js';
import { runStoreConformance, task } from '../../../src/testing/store-conformance/index.js';
import { aclBacking, cli, redisSkip, startCluster, type RedisCluster } from '../../helpers/redis-servers.js';

const skip = redisSkip();
let cluster: RedisCluster | undefined;
let namespaces = 0;

describe('redis store (3-master Redis Cluster)', { skip }, () => {
  before(async () => {
    cluster = await startCluster(3);
  });
  after(async () => {
    await cluster?.stop();
  });

  runStoreConformance('redis cluster', async () => ({ store: await openRedisStore(cluster!.url, { clock: storeSystemClock, prefix: `c${++namespaces}` }) }));
  runSharedConformance('redis cluster', {
    ...aclBacking(
      () => cluster!.servers.map((s) => s.port),
      (auth) => cluster!.url.replace('redis+cluster://', `redis+cluster://${auth}@`),
      16,
    ),
    takeoverMs: 6_000,
  });

  it('spreads the shards of one namespace over all masters, and uses them all', async () => {
    const prefix = `spread${++namespaces}`;
    const store = await openRedisStore(cluster!.url, { clock: storeSystemClock, prefix });
    const seeds = cluster!.servers.map((s) => ({ host: '127.0.0.1', port: s.port }));
    const admin = new Cluster(seeds);
    try {
      await store.tasks.schedule(
        Array.from({ length: 200 }, (_, i) => task(`spread-${i}`)),
        1,
      );
      const keys = buildKeyspace(prefix, 16);
      // Owners by port, read from the cluster itself: ioredis's own slot cache can be
      // mid-refresh (and a node may name itself by another address), which once counted a
      // fourth "master" in CI.
      const ranges = await admin.cluster('SLOTS');
      const ownerOf = (slot: number): string => {
        const range = ranges.find(([start, end]) => slot >= start && slot <= end);
        const master = range?.[2];
        return master === undefined ? `unowned slot ${slot}` : String(master[1]);
      };
      const perMaster = new Map<string, number>();
      for (const shard of keys.shards) {
        const owner = ownerOf(Number(await admin.cluster('KEYSLOT', shard.pool)));
        perMaster.set(owner, (perMaster.get(owner) ?? 0) + 1);
      }
      const spread = JSON.stringify(Object.fromEntries(perMaster));
      assert.deepEqual(
        [...perMaster.keys()].sort(),
        cluster!.servers.map((s) => String(s.port)).sort(),
        `every master holds shards: ${spread}`,
      );
      // Each master's 5,461 slots hold four of the 1,024-slot shard slices whole; the two
      // slices that straddle a boundary go to either side, by the prefix's hash.
      for (const n of perMaster.values()) assert.ok(n >= 4, `an even spread (16 shards over 3 masters: 4 to 6 each): ${spread}`);
      // Every master now holds task bodies of this namespace.
      for (const server of cluster!.servers) {
        const found = cli(server.port, '--scan', '--pattern', `${prefix}:*:pool`).trim();
        assert.ok(found.length > 0, `master ${server.port} holds pools`);
      }
    } finally {
      await store.close();
      await admin.quit();
    }
  });
});
