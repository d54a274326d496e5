/**
 * A topic purge over a pool whose first HSCAN step holds more of the topic's tasks than one
 * step may delete. purge-topic.lua then answers its own cursor again, so the next step reads
 * those entries again; from cursor 0 that answer was "0", which the store took for the end
 * of the shard's pass, and the rest of the topic's tasks stayed. A small hash (a listpack:
 * HSCAN returns it whole at once) always meets that; a larger one only when a bucket holds
 * several, as it did once in a CI run. Here the server keeps every hash a listpack.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TaskStore } from '../../../src/core/ports/index.js';
import { openRedisStore } from '../../../src/stores/redis/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { purgeTopicPass } from '../../../src/testing/store-conformance/purge-topic.js';
import { T0, task } from '../../../src/testing/store-conformance/fixtures.js';
import { cli, redisSkip, startRedis, type RedisServer } from '../../helpers/redis-servers.js';

const skip = redisSkip();

describe('redis: a topic purge whose first step meets more tasks than it may delete', { skip }, () => {
  let server: RedisServer;
  let store: TaskStore;

  before(async () => {
    server = await startRedis({ extraArgs: ['--hash-max-listpack-entries', '100000', '--hash-max-listpack-value', '100000'] });
    store = await openRedisStore(server.url, { prefix: 'lp', shards: 1, clock: storeSystemClock });
  });
  after(async () => {
    await store.close();
    await server.stop();
    server.remove();
  });

  it('deletes every pending task of the topic, a bounded step at a time', async () => {
    const batch = [];
    for (const topic of ['gone', 'kept']) for (let i = 1; i <= 7; i++) batch.push(task(`${topic}-${i}`, { topic, runAt: T0 + i * 1_000 }));
    await store.tasks.schedule(batch, T0 - 1_000);
    const pool = cli(server.port, 'KEYS', 'lp:*:pool').trim();
    assert.match(cli(server.port, 'OBJECT', 'ENCODING', pool), /listpack/, 'the pool is a listpack: HSCAN returns it whole');
    const purged = await purgeTopicPass(store, 'gone', 'pending', 2);
    assert.deepEqual(purged, ['gone-1', 'gone-2', 'gone-3', 'gone-4', 'gone-5', 'gone-6', 'gone-7']);
    assert.equal((await store.tasks.list({ topic: 'kept', state: 'pending', limit: 100 })).length, 7, 'another topic is untouched');
  });
});
