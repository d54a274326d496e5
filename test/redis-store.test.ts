import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isDelayQError } from '../src/core/errors.js';
import { openRedisStore } from '../src/stores/redis/index.js';
import { runStoreConformance, task } from './conformance/store-conformance.js';
import { redisSkip, startRedis, type RedisServer } from './support/redis-servers.js';

const skip = redisSkip();
let server: RedisServer | undefined;
let namespaces = 0;

describe('redis store (one Redis)', { skip }, () => {
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server?.stop();
    server?.remove();
  });

  // A fresh namespace per case: the same server, nothing shared.
  runStoreConformance('redis', async () => ({ store: await openRedisStore(server!.url, { prefix: `t${++namespaces}`, shards: 4 }) }));
  runStoreConformance('redis, 16 shards', async () => ({ store: await openRedisStore(server!.url, { prefix: `u${++namespaces}` }) }));

  it('refuses a Redis that may evict keys', async () => {
    const evicting = await startRedis({ maxmemoryPolicy: 'allkeys-lru' });
    try {
      await assert.rejects(
        () => openRedisStore(evicting.url, {}),
        (error: unknown) => isDelayQError(error, 'STORE_INCOMPATIBLE') && /maxmemory-policy allkeys-lru/.test(error.message),
      );
    } finally {
      await evicting.stop();
      evicting.remove();
    }
  });

  it('refuses to open a namespace with another shard count', async () => {
    const store = await openRedisStore(server!.url, { prefix: 'fixed', shards: 8 });
    await store.close();
    await assert.rejects(() => openRedisStore(server!.url, { prefix: 'fixed', shards: 16 }), (e: unknown) => isDelayQError(e, 'STORE_INCOMPATIBLE'));
  });

  it('keeps namespaces apart', async () => {
    const a = await openRedisStore(server!.url, { prefix: 'tenant-a' });
    const b = await openRedisStore(server!.url, { prefix: 'tenant-b' });
    try {
      await a.schedule([task('same')], 1);
      assert.equal(await b.get('same'), null);
      assert.equal((await b.schedule([task('same')], 1))[0]?.created, true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('recovers from a flushed script cache (NOSCRIPT -> EVAL)', async () => {
    const store = await openRedisStore(server!.url, { prefix: `s${++namespaces}` });
    try {
      await store.schedule([task('x')], 1);
      const { Redis } = await import('ioredis');
      const admin = new Redis(server!.port, '127.0.0.1');
      await admin.script('FLUSH');
      await admin.quit();
      assert.equal(await store.cancel('x', 2), 'cancelled');
    } finally {
      await store.close();
    }
  });
});
