/**
 * Parking in the Redis store (src/stores/redis/parking.ts): far-future tasks wait in
 * per-bucket lists instead of the `delayed` ZSET, and reach it before loadDue can need them.
 * The conformance suite checks what callers see; this file checks where the tasks are.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDelayQError } from '../../../src/core/errors.js';
import type { TaskStore } from '../../../src/core/ports.js';
import { FORMAT_VERSION, openRedisStore } from '../../../src/stores/redis/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { buildKeyspace } from '../../../src/stores/redis/keys.js';
import { PARK_BUCKET_MS, parkBucketOf } from '../../../src/stores/redis/parking.js';
import { task } from '../../conformance/store-conformance.js';
import { redisSkip } from '../../helpers/redis-servers.js';
import { redisForSuite, type SuiteRedis } from '../../helpers/redis-suite.js';

const skip = redisSkip();
const T0 = Date.UTC(2030, 0, 1);
const HOUR = 3_600_000;
const SHARDS = 4;
let redis: SuiteRedis;
let namespaces = 0;

interface Where {
  readonly delayed: number;
  readonly parked: number;
  readonly parkLists: number;
}

/** How many ids are in `delayed` and in park lists, over all shards of a namespace. */
async function where(prefix: string): Promise<Where> {
  const keys = buildKeyspace(prefix, SHARDS);
  let delayed = 0;
  let parked = 0;
  let parkLists = 0;
  for (const shard of keys.shards) {
    delayed += await redis.admin.zcard(shard.delayed);
    for (const bucket of await redis.admin.zrange(shard.parked, 0, -1)) {
      parkLists++;
      parked += await redis.admin.llen(shard.park(Number(bucket)));
    }
  }
  return { delayed, parked, parkLists };
}

async function open(prefix: string, horizonMs = 60_000): Promise<TaskStore> {
  return openRedisStore(redis.server.url, { clock: storeSystemClock, prefix, shards: SHARDS, horizonMs });
}

describe('redis store parking', { skip }, () => {
  redis = redisForSuite();

  it('parks tasks due beyond the next bucket after the horizon, and keeps near ones in delayed', async () => {
    const prefix = `p${++namespaces}`;
    const store = await open(prefix);
    try {
      const far = Array.from({ length: 40 }, (_, i) => task(`far${i}`, { runAt: T0 + 3 * HOUR + i }));
      const near = Array.from({ length: 10 }, (_, i) => task(`near${i}`, { runAt: T0 + 10 * 60_000 + i }));
      await store.schedule([...far, ...near], T0);
      assert.deepEqual(await where(prefix), { delayed: 10, parked: 40, parkLists: SHARDS });
      // A task exactly at the first bucket that may park, and one just before it.
      const first = parkBucketOf(T0 + 60_000) + 2;
      await store.schedule([task('edge-in', { runAt: first * PARK_BUCKET_MS }), task('edge-out', { runAt: first * PARK_BUCKET_MS - 1 })], T0);
      const after = await where(prefix);
      assert.equal(after.delayed, 11, 'the one before the first park bucket is in delayed');
      assert.equal(after.parked, 41, 'the one in it is parked');
    } finally {
      await store.close();
    }
  });

  it('moves a bucket into delayed when loadDue reaches it, and the next one ahead of time', async () => {
    const prefix = `p${++namespaces}`;
    const store = await open(prefix);
    try {
      const runAt = T0 + 3 * HOUR;
      await store.schedule(
        Array.from({ length: 30 }, (_, i) => task(`t${i}`, { runAt: runAt + i })),
        T0,
      );
      await store.schedule(Array.from({ length: 5 }, (_, i) => task(`u${i}`, { runAt: T0 + 30 * HOUR + i })), T0);
      assert.deepEqual(await store.loadDue(T0 + 60_000, null, 100), []);
      assert.equal((await where(prefix)).parked, 35, 'nothing near yet');
      // One bucket before runAt's: loadDue itself needs nothing, the background takes runAt's bucket.
      const until = (parkBucketOf(runAt) - 1) * PARK_BUCKET_MS;
      assert.deepEqual(await store.loadDue(until, null, 100), []);
      await store.close(); // waits for the background unparking
      assert.deepEqual(await where(prefix), { delayed: 30, parked: 5, parkLists: await listsOf(prefix) });
      const again = await open(prefix);
      try {
        const refs = await again.loadDue(runAt + 30, null, 100);
        assert.deepEqual(
          refs.map((r) => r.id),
          Array.from({ length: 30 }, (_, i) => `t${i}`),
        );
      } finally {
        await again.close();
      }
    } finally {
      await store.close();
    }
  });

  it('drops the parked ids of tasks cancelled or purged meanwhile, and never loads a task twice', async () => {
    const prefix = `p${++namespaces}`;
    const store = await open(prefix);
    try {
      const runAt = T0 + 5 * HOUR;
      await store.schedule([task('gone'), task('reused', { runAt }), task('kept', { runAt: runAt + 1 })].map((t) => (t.id === 'gone' ? { ...t, runAt } : t)), T0);
      assert.equal(await store.cancel('gone', T0 + 1), 'cancelled');
      assert.equal(await store.cancel('reused', T0 + 1), 'cancelled');
      assert.equal(await store.purge(T0 + 2, 100), 2);
      // A new task under a purged id, due near: its old parked id must not move it or copy it.
      await store.schedule([task('reused', { runAt: T0 + 1_000 })], T0 + 3);
      const refs = await store.loadDue(runAt + 10, null, 100);
      assert.deepEqual(
        refs.map((r) => [r.id, r.dueAt]),
        [
          ['reused', T0 + 1_000],
          ['kept', runAt + 1],
        ],
      );
      const counts = await where(prefix);
      assert.equal(counts.delayed, 2, 'one member per pending task');
      assert.equal(counts.parked, 0);
    } finally {
      await store.close();
    }
  });

  it('keeps far tasks in far less Redis memory than near ones', async () => {
    const n = 20_000;
    const measure = async (offset: number): Promise<number> => {
      const prefix = `p${++namespaces}`;
      const store = await open(prefix);
      try {
        const before = await usedMemory();
        for (let from = 0; from < n; from += 1_000)
          await store.schedule(
            Array.from({ length: 1_000 }, (_, i) => task(`task-${String(from + i).padStart(12, '0')}`, { runAt: T0 + offset + i })),
            T0,
          );
        return ((await usedMemory()) - before) / n;
      } finally {
        await store.close();
      }
    };
    const near = await measure(10 * 60_000);
    const far = await measure(6 * HOUR);
    console.log(`  bytes per pending task: near ${near.toFixed(0)}, far (parked) ${far.toFixed(0)}`);
    assert.ok(far < near - 60, `parked tasks save at least 60 bytes each (near ${near.toFixed(0)}, far ${far.toFixed(0)})`);
  });

  it('upgrades a namespace of format 1 in place and refuses a newer format', async () => {
    const keys = buildKeyspace('old-format', SHARDS);
    await redis.admin.hset(keys.meta, 'shards', String(SHARDS), 'version', '1');
    const store = await openRedisStore(redis.server.url, { clock: storeSystemClock, prefix: 'old-format', shards: SHARDS });
    await store.close();
    assert.equal(await redis.admin.hget(keys.meta, 'version'), FORMAT_VERSION);
    const newer = buildKeyspace('new-format', SHARDS);
    await redis.admin.hset(newer.meta, 'shards', String(SHARDS), 'version', '99');
    await assert.rejects(
      () => openRedisStore(redis.server.url, { clock: storeSystemClock, prefix: 'new-format', shards: SHARDS }),
      (e: unknown) => isDelayQError(e, 'STORE_INCOMPATIBLE'),
    );
  });
});

async function listsOf(prefix: string): Promise<number> {
  let lists = 0;
  for (const shard of buildKeyspace(prefix, SHARDS).shards) lists += await redis.admin.zcard(shard.parked);
  return lists;
}

async function usedMemory(): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.admin.info('memory'))?.[1] ?? 0);
}
