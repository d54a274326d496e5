/**
 * Durability and reconnects: with appendonly yes + appendfsync always, a Redis killed with
 * SIGKILL and restarted on the same data dir has every acknowledged change; the open
 * store reconnects by itself and goes on (its scripts are reloaded through NOSCRIPT).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DelayQueue } from '../../../src/open-queue.js';
import { openRedisStore } from '../../../src/stores/redis/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { silentLogger } from '../../../src/core/logger.js';
import type { TaskStore } from '../../../src/core/ports/index.js';
import { buildKeyspace } from '../../../src/stores/redis/keys.js';
import { pushSubscription, task } from '../../../src/testing/store-conformance/index.js';
import { cli, redisSkip, startRedis, type RedisServer } from '../../helpers/redis-servers.js';

const skip = redisSkip();
const servers: RedisServer[] = [];

describe('redis store across a Redis crash (AOF)', { skip }, () => {
  after(async () => {
    for (const s of servers) await s.stop();
    for (const s of servers) s.remove();
  });

  it('loses nothing acknowledged, reconnects and resumes without reopening', async () => {
    const first = await startRedis({ appendonly: true });
    servers.push(first);
    const store: TaskStore = await openRedisStore(first.url, { clock: storeSystemClock, prefix: 'aof' });
    try {
      const T = 1_000_000;
      const tasks = Array.from({ length: 2_000 }, (_, i) => task(`job-${i}`, { runAt: T + i }));
      for (let i = 0; i < tasks.length; i += 500) await store.tasks.schedule(tasks.slice(i, i + 500), T);
      const claimed = await store.tasks.reserve(
        tasks.slice(0, 300).map((t) => t.id),
        T + 5_000,
      );
      assert.equal(claimed.length, 300);
      for (const record of claimed.slice(0, 100)) assert.equal((await store.tasks.ack(record.id, record.receipt!, T + 5_001)).status, 'acked');
      for (let i = 300; i < 350; i++) assert.equal((await store.tasks.cancel(`job-${i}`, T + 5_002)).status, 'cancelled');
      const before = await store.tasks.stats();

      await first.kill(); // a crash: no shutdown save
      // A call made while Redis is down waits in ioredis' offline queue and goes through after the restart.
      const during = store.tasks.schedule([task('during-outage', { runAt: T })], T + 6_000);
      const second = await startRedis({ appendonly: true, dir: first.dir, port: first.port });
      servers.push(second);
      assert.equal((await during)[0]?.created, true);
      // Retried after a lost connection: the same id never makes a second task.
      assert.equal((await store.tasks.schedule([task('during-outage', { runAt: T })], T + 6_001))[0]?.created, false);

      const afterRestart = await store.tasks.stats();
      assert.deepEqual(afterRestart.byState, { ...before.byState, pending: before.byState.pending + 1 });
      assert.deepEqual(before.byState, { pending: 1_650, reserved: 200, completed: 100, dead: 0, cancelled: 50 });
      const record = await store.tasks.get('job-1999');
      assert.equal(record?.runAt, T + 1_999);
      const still = claimed[150]!;
      assert.equal((await store.tasks.ack(still.id, still.receipt!, T + 7_000)).status, 'acked');
      const due = await store.tasks.loadDue(Number.POSITIVE_INFINITY, null, 5_000);
      assert.equal(due.length, 1_650 + 1 + 199);
    } finally {
      await store.close();
    }
  });

  it('keeps delivering across a Redis crash: consumers and timers resume by themselves', { timeout: 60_000 }, async () => {
    const first = await startRedis({ appendonly: true });
    servers.push(first);
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (_obj: object, msg?: string) => void warnings.push(msg ?? '') };
    const queue = await DelayQueue.open({ store: first.url, storeOptions: { prefix: 'resume' }, logger });
    try {
      const seen = new Set<string>();
      queue.work('r', (delivery) => void seen.add(delivery.id), { concurrency: 20 });
      const runAt = Date.now() + 1_500;
      await queue.scheduleMany(Array.from({ length: 200 }, (_, i) => ({ id: `r-${i}`, topic: 'r', payload: i, runAt })));
      await first.kill();
      await sleep(300);
      const second = await startRedis({ appendonly: true, dir: first.dir, port: first.port });
      servers.push(second);
      const deadline = Date.now() + 30_000;
      while (seen.size < 200 && Date.now() < deadline) await sleep(50);
      assert.equal(seen.size, 200, 'every task delivered after the restart');
      // The failed reconnects went to the queue's logger, not to ioredis' console fallback.
      assert.ok(warnings.includes('redis connection error; ioredis reconnects'), warnings.join(' | '));
    } finally {
      await queue.close();
    }
  });
});

describe('redis store: push subscriptions', { skip }, () => {
  const pushServers: RedisServer[] = [];
  after(async () => {
    for (const s of pushServers) await s.stop();
    for (const s of pushServers) s.remove();
  });

  it('are shared by every store on the namespace and survive a Redis crash (AOF)', async () => {
    const first = await startRedis({ appendonly: true });
    pushServers.push(first);
    const writer = await openRedisStore(first.url, { clock: storeSystemClock, prefix: 'push', shards: 4 });
    const reader = await openRedisStore(first.url, { clock: storeSystemClock, prefix: 'push', shards: 4 });
    const replaced = pushSubscription('orders', { url: 'https://other.example.com/h', updatedAt: 2 });
    try {
      await writer.push.putPushSubscription(pushSubscription('orders'));
      await writer.push.putPushSubscription(replaced);
      await writer.push.putPushSubscription(pushSubscription('a.b:c-d_e'));
      await writer.push.putPushSubscription(pushSubscription('gone'));
      assert.equal(await writer.push.deletePushSubscription('gone'), true);
      // Another process (here another store) reads what this one wrote.
      assert.deepEqual(await reader.push.getPushSubscription('orders'), replaced);
      assert.equal(await reader.push.deletePushSubscription('gone'), false);
    } finally {
      await writer.close();
      await reader.close();
    }

    await first.kill();
    const second = await startRedis({ appendonly: true, dir: first.dir, port: first.port });
    pushServers.push(second);
    const reopened = await openRedisStore(second.url, { clock: storeSystemClock, prefix: 'push', shards: 4 });
    try {
      assert.deepEqual(await reopened.push.listPushSubscriptions(), [pushSubscription('a.b:c-d_e'), replaced]);
    } finally {
      await reopened.close();
    }
    // One hash, in the namespace's meta slot, beside the meta hash (whose format version did not change).
    const keys = buildKeyspace('push', 4);
    assert.equal(cli(second.port, 'TYPE', keys.push).trim(), 'hash');
    assert.deepEqual(cli(second.port, 'HKEYS', keys.push).trim().split('\n').sort(), ['a.b:c-d_e', 'orders']);
    assert.equal(cli(second.port, 'HGET', keys.meta, 'version').trim(), '2');
  });

  it('skips an unreadable field with a warning instead of failing every read', async () => {
    const server = await startRedis();
    pushServers.push(server);
    const warnings: object[] = [];
    const logger = { ...silentLogger, warn: (obj: object) => void warnings.push(obj) };
    const store = await openRedisStore(server.url, { clock: storeSystemClock, prefix: 'corrupt', logger });
    try {
      await store.push.putPushSubscription(pushSubscription('good'));
      const key = buildKeyspace('corrupt', 16).push;
      cli(server.port, 'HSET', key, 'bad', 'not json');
      cli(server.port, 'HSET', key, 'worse', '{"url":"https://x.example.com","secrets":"nope"}');
      assert.deepEqual((await store.push.listPushSubscriptions()).map((s) => s.topic), ['good']);
      assert.equal(await store.push.getPushSubscription('bad'), null);
      assert.deepEqual(warnings.map((w) => (w as { topic?: string }).topic).sort(), ['bad', 'bad', 'worse']);
      // Setting it again repairs it.
      await store.push.putPushSubscription(pushSubscription('bad'));
      assert.deepEqual((await store.push.listPushSubscriptions()).map((s) => s.topic), ['bad', 'good']);
    } finally {
      await store.close();
    }
  });
});
