import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isDelayQError } from '../../../src/core/errors.js';
import { backoffDelay, DEFAULT_BACKOFF } from '../../../src/core/task/backoff.js';
import { openRedisStore } from '../../../src/stores/redis/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { scripts } from '../../../src/stores/redis/scripts.js';
import { runSharedConformance } from '../../../src/testing/shared-conformance.js';
import { runStoreConformance, scheduleRecord, task } from '../../../src/testing/store-conformance/index.js';
import { aclBacking, addLeastPrivilegeUser, redisSkip, startRedis, type RedisServer } from '../../helpers/redis-servers.js';

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
  // Each namespace of the first run a user of its own with the least privilege (its prefix's
  // keys and channels, no dangerous or admin command but INFO): every operation works so.
  runStoreConformance('redis, least privilege', async () => {
    const prefix = `t${++namespaces}`;
    const url = `redis://${addLeastPrivilegeUser(server!.port, prefix)}@127.0.0.1:${server!.port}`;
    return { store: await openRedisStore(url, { clock: storeSystemClock, prefix, shards: 4 }) };
  });
  runStoreConformance('redis, 16 shards', async () => ({ store: await openRedisStore(server!.url, { clock: storeSystemClock, prefix: `u${++namespaces}` }) }));
  // Several processes on one namespace; a shard lease runs 5 s and a tick renews or takes one every second (docs/redis.md).
  // Each namespace a user of its own, so that one shard can be made to refuse writes.
  runSharedConformance('redis', {
    ...aclBacking(
      () => [server!.port],
      (auth) => `redis://${auth}@127.0.0.1:${server!.port}`,
      8,
    ),
    takeoverMs: 6_000,
  });

  it('refuses a Redis that may evict keys', async () => {
    const evicting = await startRedis({ maxmemoryPolicy: 'allkeys-lru' });
    try {
      await assert.rejects(
        () => openRedisStore(evicting.url, { clock: storeSystemClock }),
        (error: unknown) => isDelayQError(error, 'STORE_INCOMPATIBLE') && /maxmemory-policy allkeys-lru/.test(error.message),
      );
    } finally {
      await evicting.stop();
      evicting.remove();
    }
  });

  it('opens for a user who may not run INFO, warning once that the eviction policy is not checked', async () => {
    const prefix = 'noinfo';
    const auth = addLeastPrivilegeUser(server!.port, prefix, [`~${prefix}:*`, `&${prefix}:*`, '+@all', '-@dangerous', '-@admin']);
    const warnings: string[] = [];
    const logger = { debug: () => undefined, info: () => undefined, error: () => undefined, warn: (_: unknown, message?: string) => void warnings.push(message ?? '') };
    const store = await openRedisStore(`redis://${auth}@127.0.0.1:${server!.port}`, { clock: storeSystemClock, prefix, shards: 2, logger: { ...logger, child: () => logger } as never });
    try {
      await store.tasks.schedule([task('a')], Date.now());
      assert.equal((await store.tasks.get('a'))?.state, 'pending');
      assert.equal(warnings.filter((w) => w.includes('maxmemory-policy noeviction')).length, 1, warnings.join(' | '));
    } finally {
      await store.close();
    }
  });

  it('refuses to open a namespace with another shard count', async () => {
    const store = await openRedisStore(server!.url, { clock: storeSystemClock, prefix: 'fixed', shards: 8 });
    await store.close();
    await assert.rejects(() => openRedisStore(server!.url, { clock: storeSystemClock, prefix: 'fixed', shards: 16 }), (e: unknown) => isDelayQError(e, 'STORE_INCOMPATIBLE'));
  });

  it('keeps namespaces apart', async () => {
    const a = await openRedisStore(server!.url, { clock: storeSystemClock, prefix: 'tenant-a' });
    const b = await openRedisStore(server!.url, { clock: storeSystemClock, prefix: 'tenant-b' });
    try {
      await a.tasks.schedule([task('same')], 1);
      assert.equal(await b.tasks.get('same'), null);
      assert.equal((await b.tasks.schedule([task('same')], 1))[0]?.created, true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('retries with the same backoff as core, default policy included', async () => {
    const store = await openRedisStore(server!.url, { clock: storeSystemClock, prefix: `b${++namespaces}` });
    try {
      const policies = [DEFAULT_BACKOFF, { baseMs: 250, factor: 1.5, maxMs: 10_000, jitter: 0.3 }];
      for (const [i, backoff] of policies.entries()) {
        const id = `retry-${i}`;
        await store.tasks.schedule([task(id, { runAt: 1, backoff, maxAttempts: 5 })], 1);
        let now = 1;
        for (let attempt = 1; attempt <= 3; attempt++) {
          const [claimed] = await store.tasks.reserve([id], now);
          assert.ok(claimed?.receipt);
          const outcome = await store.tasks.nack({ id, receipt: claimed.receipt, now, random: 0.37 });
          const expected = now + backoffDelay(backoff, attempt, () => 0.37);
          assert.equal(outcome.status === 'retrying' && outcome.ref.dueAt, expected);
          now = expected;
        }
        assert.deepEqual((await store.tasks.get(id))?.backoff, backoff);
      }
    } finally {
      await store.close();
    }
  });

  it('gives back prefetched tasks a pull consumer did not take, without counting the attempt', async () => {
    const { DelayQueue } = await import('../../../src/open-queue.js');
    const queue = await DelayQueue.open({ store: server!.url, storeOptions: { prefix: `pull${++namespaces}` } });
    try {
      await queue.scheduleMany(Array.from({ length: 20 }, (_, i) => ({ id: `pull-${i}`, topic: 'pull', payload: i })));
      const [first] = await queue.reserve('pull', { max: 1, waitMs: 2_000 });
      assert.equal(first?.attempt, 1);
      await new Promise((resolve) => setTimeout(resolve, 300)); // the kept surplus goes back
      const stats = await queue.stats();
      assert.equal(stats.counts.reserved, 1, 'only the delivered task stays reserved');
      const rest = await queue.reserve('pull', { max: 100, waitMs: 2_000 });
      assert.ok(rest.length > 0);
      assert.ok(rest.every((d) => d.attempt === 1), 'released tasks are delivered as first attempts');
    } finally {
      await queue.close();
    }
  });

  it('reserves of a limited topic in the store only what its admission granted: nothing prefetched', async () => {
    // A prefetch of 64 for an admission of 1 went back after KEEP_MS, for every admission:
    // 100 limited topics with a backlog churned enough to delay an unlimited topic by seconds.
    const { DelayQueue } = await import('../../../src/open-queue.js');
    const queue = await DelayQueue.open({ store: server!.url, storeOptions: { prefix: `limited${++namespaces}` } });
    try {
      await queue.topics.setLimits('lim', { rate: 1, burst: 1 });
      await queue.scheduleMany(Array.from({ length: 20 }, (_, i) => ({ id: `lim-${i}`, topic: 'lim', payload: i })));
      const batch = await queue.reserve('lim', { max: 10, waitMs: 2_000 });
      assert.equal(batch.length, 1, 'one token, one delivery');
      const stats = await queue.stats();
      assert.equal(stats.counts.reserved, 1, 'no task reserved ahead of an admission');
    } finally {
      await queue.close();
    }
  });

  it('gives prefetched tasks back in due order, ahead of those that fell due after them', async () => {
    const { DelayQueue } = await import('../../../src/open-queue.js');
    // One shard: one ready list, so the order of delivery is the order of that list.
    const queue = await DelayQueue.open({ store: server!.url, storeOptions: { prefix: `order${++namespaces}`, shards: 1 } });
    try {
      const now = Date.now();
      await queue.scheduleMany(Array.from({ length: 40 }, (_, i) => ({ id: `o-${String(i).padStart(2, '0')}`, topic: 'o', payload: i, runAt: now - 40 + i })));
      const [first] = await queue.reserve('o', { max: 1, waitMs: 2_000 });
      assert.equal(first?.id, 'o-00');
      await new Promise((resolve) => setTimeout(resolve, 300)); // the kept surplus goes back
      const rest: string[] = [];
      while (rest.length < 39) {
        const batch = await queue.reserve('o', { max: 100, waitMs: 2_000 });
        assert.ok(batch.length > 0, `got ${rest.length} of 39`);
        rest.push(...batch.map((d) => d.id));
      }
      // Tasks a background reserve kept at that moment are handed out first (kept tasks need
      // no round trip), in due order; the ones given back come in due order too. So at most
      // one step back: given back newest first, there were 30.
      const stepsBack = rest.filter((id, i) => i > 0 && id < rest[i - 1]!).length;
      assert.ok(stepsBack <= 1, `delivered in due order: ${rest.join(' ')}`);
    } finally {
      await queue.close();
    }
  });

  it('hands tasks reserved ahead for a busy consumer to it once each, and gives back what it cannot start in time', async () => {
    const { DelayQueue } = await import('../../../src/open-queue.js');
    const queue = await DelayQueue.open({ store: server!.url, storeOptions: { prefix: `ahead${++namespaces}`, shards: 4 } });
    try {
      // A slow consumer of one slot: promote reserves up to 4 for it while it asks, more
      // than it can start within the 100 ms a kept task waits, so some go back to the lists.
      const runAt = Date.now() + 300;
      await queue.scheduleMany(Array.from({ length: 12 }, (_, i) => ({ id: `ahead-${i}`, topic: 'ahead', payload: i, runAt })));
      const seen = new Map<string, number>();
      const attempts: number[] = [];
      let early = 0;
      const worker = queue.work(
        'ahead',
        async (d) => {
          if (Date.now() < d.runAt) early++;
          seen.set(d.id, (seen.get(d.id) ?? 0) + 1);
          attempts.push(d.attempt);
          await new Promise((resolve) => setTimeout(resolve, 60));
        },
        { concurrency: 1 },
      );
      const deadline = Date.now() + 10_000;
      while (seen.size < 12 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      await worker.close();
      assert.equal(seen.size, 12, 'every task delivered');
      assert.ok([...seen.values()].every((n) => n === 1), 'none twice');
      assert.ok(attempts.every((a) => a === 1), 'a kept task given back is not counted as an attempt');
      assert.equal(early, 0);
      const stats = await queue.stats();
      assert.equal(stats.counts.reserved, 0, 'nothing left reserved');
      assert.equal(stats.counts.completed, 12);
    } finally {
      await queue.close();
    }
  });

  it('keeps reserving for a worker between its calls: a task due while it runs a handler does not go to the shared lists', async () => {
    const { DelayQueue } = await import('../../../src/open-queue.js');
    const { Redis } = await import('ioredis');
    const prefix = `linger${++namespaces}`;
    // Keyspace notifications for list commands: every RPUSH to the topic's ready list (a
    // promotion that found no local consumer asking) is seen.
    const admin = new Redis(server!.port, '127.0.0.1');
    const listener = new Redis(server!.port, '127.0.0.1');
    await admin.config('SET', 'notify-keyspace-events', 'Kl');
    const pushes: string[] = [];
    listener.on('pmessage', (_pattern: string, channel: string, event: string) => {
      if (event === 'rpush' || event === 'lpush') pushes.push(channel);
    });
    await listener.psubscribe(`__keyspace@0__:${prefix}:*:ready:*`);
    const queue = await DelayQueue.open({ store: server!.url, storeOptions: { prefix, shards: 1 } });
    try {
      // One slot: while the first task's 60 ms handler runs, the worker is not calling; the
      // second falls due 15 ms into it, is reserved for the worker (within LINGER_MS of its
      // last call) and kept until the handler ends (within KEEP_MS, 100 ms).
      const runAt = Date.now() + 300;
      await queue.scheduleMany([
        { id: 'first', topic: 'linger', payload: 1, runAt },
        { id: 'second', topic: 'linger', payload: 2, runAt: runAt + 15 },
      ]);
      const delivered: string[] = [];
      const worker = queue.work(
        'linger',
        async (d) => {
          delivered.push(d.id);
          if (d.id === 'first') await new Promise((resolve) => setTimeout(resolve, 60));
        },
        { concurrency: 1 },
      );
      const deadline = Date.now() + 5_000;
      while (delivered.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      await worker.close();
      assert.deepEqual(delivered, ['first', 'second']);
      assert.deepEqual(pushes, [], 'no task went through the shared ready list');
    } finally {
      await queue.close();
      await admin.config('SET', 'notify-keyspace-events', '');
      await Promise.all([admin.quit(), listener.quit()]);
    }
  });

  it('loads every script at open, so no first call pays a NOSCRIPT round trip', async () => {
    const { Redis } = await import('ioredis');
    const admin = new Redis(server!.port, '127.0.0.1');
    try {
      await admin.script('FLUSH');
      const shas = [...scripts().values()].map((script) => script.sha);
      assert.ok((await admin.script('EXISTS', ...shas) as number[]).every((found) => found === 0));
      const store = await openRedisStore(server!.url, { clock: storeSystemClock, prefix: `s${++namespaces}` });
      await store.close();
      assert.deepEqual(await admin.script('EXISTS', ...shas), shas.map(() => 1));
    } finally {
      await admin.quit();
    }
  });

  it('takes an unreadable stored schedule as none: putNewSchedules sets it again', async () => {
    const prefix = `bad${++namespaces}`;
    const store = await openRedisStore(server!.url, { clock: storeSystemClock, prefix });
    const { Redis } = await import('ioredis');
    const admin = new Redis(server!.port, '127.0.0.1');
    try {
      const [key] = await admin.keys(`${prefix}:*:meta`);
      await admin.hset(key!.replace(/:meta$/, ':schedules'), 'x', '[2,"written by a later layout"]');
      assert.equal(await store.schedules.getSchedule('x'), null);
      const x = scheduleRecord('x');
      assert.deepEqual(await store.schedules.putNewSchedules([x]), [null]);
      assert.deepEqual(await store.schedules.getSchedule('x'), x);
    } finally {
      await admin.quit();
      await store.close();
    }
  });

  it('recovers from a flushed script cache (NOSCRIPT -> EVAL)', async () => {
    const store = await openRedisStore(server!.url, { clock: storeSystemClock, prefix: `s${++namespaces}` });
    try {
      await store.tasks.schedule([task('x')], 1);
      const { Redis } = await import('ioredis');
      const admin = new Redis(server!.port, '127.0.0.1');
      await admin.script('FLUSH');
      await admin.quit();
      assert.equal((await store.tasks.cancel('x', 2)).status, 'cancelled');
    } finally {
      await store.close();
    }
  });
});
