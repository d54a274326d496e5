/**
 * Every node of a Redis Cluster gone at once (killed; a network split away from all of
 * them): the cluster client has no node to send to and holds calls in a queue of its own,
 * which ioredis times by nothing. With `callTimeoutMs` each call still fails with
 * STORE_UNAVAILABLE once the timeout passes, and once the nodes are back (same ports, their
 * append-only files) the queue carries on by itself and delivers what was acknowledged.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { DelayQueue } from '../../../src/open-queue.js';
import { cli, redisSkip, startCluster, startRedis, type RedisCluster, type RedisServer } from '../../helpers/redis-servers.js';
import { refusalsOf, watchDeliveries } from '../../helpers/outage.js';
import { untilResolved } from '../../helpers/retry.js';

const skip = redisSkip();
const CALL_TIMEOUT_MS = 500;

describe('redis cluster store: every node down', { skip }, () => {
  let cluster: RedisCluster | undefined;
  let restarted: RedisServer[] = [];
  before(async () => {
    cluster = await startCluster(3, 0, { appendonly: true });
  });
  after(async () => {
    for (const server of restarted) await server.stop();
    await cluster?.stop();
  });

  it('fails calls after callTimeoutMs while no node answers, and carries on once they are back', { timeout: 90_000 }, async () => {
    const q = await DelayQueue.open({ store: `${cluster!.url}?prefix=down&shards=4&callTimeoutMs=${CALL_TIMEOUT_MS}` });
    const deliveries = watchDeliveries(q, 'down');
    const many = Array.from({ length: 200 }, (_, i) => ({ id: `many-${i}`, topic: 'down', payload: null, delayMs: 100 }));
    try {
      await q.schedule({ id: 'before', topic: 'down', payload: null, delayMs: 0 });
      await Promise.all(cluster!.servers.map((s) => s.kill()));
      const refusals = await refusalsOf(
        [() => q.schedule({ id: 'during', topic: 'down', payload: null, delayMs: 100 }), () => q.scheduleMany(many), () => q.stats()],
        'a call to a cluster with no node resolved',
      );
      for (const refusal of refusals) {
        assert.equal(refusal.code, 'STORE_UNAVAILABLE', refusal.message);
        // Before, a call waited in the cluster client's queue until a node came back.
        assert.ok(refusal.ms < 10 * CALL_TIMEOUT_MS, `refused after ${refusal.ms} ms: ${refusal.message}`);
      }
      restarted = await Promise.all(cluster!.servers.map((s) => startRedis({ cluster: true, appendonly: true, dir: s.dir, port: s.port })));
      const deadline = Date.now() + 40_000;
      while (!restarted.every((s) => cli(s.port, 'CLUSTER', 'INFO').includes('cluster_state:ok'))) {
        if (Date.now() > deadline) assert.fail('the restarted cluster did not reach cluster_state:ok');
        await sleep(50);
      }
      // Sending again is safe whether or not the first attempt ran.
      await untilResolved(() => q.schedule({ id: 'during', topic: 'down', payload: null, delayMs: 100 }), deadline);
      await untilResolved(() => q.scheduleMany(many), deadline);
      const want = ['before', 'during', ...many.map((t) => t.id)];
      await deliveries.untilDelivered(want, deadline);
      assert.deepEqual(deliveries.early, []);
    } finally {
      await q.close();
    }
  });
});
