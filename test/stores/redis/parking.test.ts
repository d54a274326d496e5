/**
 * Parking in the Redis store (src/stores/redis/parking.ts): far-future tasks wait in
 * per-bucket lists instead of the `delayed` ZSET, and reach it before loadDue can need them.
 * The conformance suite checks what callers see; this file checks where the tasks are.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDelayQError } from '../../../src/core/errors.js';
import type { TaskStore } from '../../../src/core/ports/index.js';
import { FORMAT_VERSION, openRedisStore } from '../../../src/stores/redis/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { buildKeyspace } from '../../../src/stores/redis/keys.js';
import { PARK_BUCKET_MS, parkBucketOf } from '../../../src/stores/redis/parking.js';
import { decodeTask } from '../../../src/stores/redis/codec.js';
import { unparkScript } from '../../../src/stores/redis/parking-commands.js';
import { task } from '../../../src/testing/store-conformance/index.js';
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
      await store.tasks.schedule([...far, ...near], T0);
      assert.deepEqual(await where(prefix), { delayed: 10, parked: 40, parkLists: SHARDS });
      // A task exactly at the first bucket that may park, and one just before it.
      const first = parkBucketOf(T0 + 60_000) + 2;
      await store.tasks.schedule([task('edge-in', { runAt: first * PARK_BUCKET_MS }), task('edge-out', { runAt: first * PARK_BUCKET_MS - 1 })], T0);
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
      await store.tasks.schedule(
        Array.from({ length: 30 }, (_, i) => task(`t${i}`, { runAt: runAt + i })),
        T0,
      );
      await store.tasks.schedule(Array.from({ length: 5 }, (_, i) => task(`u${i}`, { runAt: T0 + 30 * HOUR + i })), T0);
      assert.deepEqual(await store.tasks.loadDue(T0 + 60_000, null, 100), []);
      assert.equal((await where(prefix)).parked, 35, 'nothing near yet');
      // One bucket before runAt's: loadDue itself needs nothing, the background takes runAt's bucket.
      const until = (parkBucketOf(runAt) - 1) * PARK_BUCKET_MS;
      assert.deepEqual(await store.tasks.loadDue(until, null, 100), []);
      await store.close(); // waits for the background unparking
      assert.deepEqual(await where(prefix), { delayed: 30, parked: 5, parkLists: await listsOf(prefix) });
      const again = await open(prefix);
      try {
        const refs = await again.tasks.loadDue(runAt + 30, null, 100);
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
      await store.tasks.schedule([task('gone'), task('reused', { runAt }), task('kept', { runAt: runAt + 1 })].map((t) => (t.id === 'gone' ? { ...t, runAt } : t)), T0);
      assert.equal((await store.tasks.cancel('gone', T0 + 1)).status, 'cancelled');
      assert.equal((await store.tasks.cancel('reused', T0 + 1)).status, 'cancelled');
      assert.equal(await store.tasks.purge(T0 + 2, 100), 2);
      // A new task under a purged id, due near: its old parked id must not move it or copy it.
      await store.tasks.schedule([task('reused', { runAt: T0 + 1_000 })], T0 + 3);
      const refs = await store.tasks.loadDue(runAt + 10, null, 100);
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

  it('counts parked tasks per hour and topic through parking, cancel, purge and a reused id, reschedule, reserve and unpark', async () => {
    const prefix = `p${++namespaces}`;
    const store = await open(prefix);
    const check = async (when: string): Promise<void> => assert.deepEqual(await parkedCounts(prefix), await parkedReference(prefix), when);
    try {
      // Dense enough (~2 per hour, topic and shard) that a count taken twice, or missed,
      // shows: a count that would go below zero is dropped, which would hide it.
      const topics = ['orders', 'mail', 'sms'];
      const runAtOf = (i: number): number => T0 + 3 * HOUR + i * 150_000;
      for (let from = 0; from < 1_200; from += 400)
        await store.tasks.schedule(
          Array.from({ length: 400 }, (_, i) => task(`t${from + i}`, { topic: topics[(from + i) % 3]!, runAt: runAtOf(from + i) })),
          T0,
        );
      await store.tasks.schedule(Array.from({ length: 10 }, (_, i) => task(`near${i}`, { runAt: T0 + 5 * 60_000 + i })), T0);
      assert.ok(Object.keys(await parkedReference(prefix)).length > 50, 'tasks are parked over many hours');
      await check('after schedule');
      // A parked task's cancel answers its own topic (the engine counts the cancel under it).
      for (let i = 0; i < 1_200; i += 9) assert.deepEqual(await store.tasks.cancel(`t${i}`, T0 + 1), { status: 'cancelled', topic: topics[i % 3] });
      assert.deepEqual(await store.tasks.cancelMany(['t1', 't2', 'near0', 'missing'], T0 + 1), [
        { status: 'cancelled', topic: 'mail' },
        { status: 'cancelled', topic: 'sms' },
        { status: 'cancelled', topic: 'orders' },
        { status: 'not_found' },
      ]);
      await check('after cancel');
      // Cancelled parked tasks purged, their ids used again while the stale ids wait in their
      // park lists: parked in another bucket, in the same bucket (twice in one list), near.
      await store.tasks.purge(T0 + 2, 1_000);
      await store.tasks.schedule(
        [
          task('t0', { runAt: runAtOf(0) + 40 * HOUR }),
          task('t9', { runAt: runAtOf(9) + 1, topic: 'mail' }),
          task('t18', { runAt: T0 + 10 * 60_000 }),
          task('t1', { runAt: runAtOf(1) }),
        ],
        T0 + 3,
      );
      await check('after ids used again');
      // Reschedule parked tasks: later, earlier, near; and a task in `delayed` far ahead.
      for (const [id, runAt] of [['t3', runAtOf(3) + 20 * HOUR], ['t4', runAtOf(4) - HOUR], ['t5', T0 + 2 * 60_000], ['near1', T0 + 30 * HOUR]] as const)
        assert.equal((await store.tasks.reschedule(id, runAt, T0 + 4)).status, 'rescheduled');
      assert.equal((await store.tasks.reschedule('t3', runAtOf(3) + 21 * HOUR, T0 + 4)).status, 'rescheduled');
      await check('after reschedule');
      // A parked task reserved by id once due, before anything unparked its bucket.
      const [reserved] = await store.tasks.reserve(['t6'], runAtOf(6));
      assert.equal(reserved?.id, 't6');
      await check('after reserving a parked task');
      // Unparking: the buckets up to 20 h ahead, then everything.
      await store.tasks.loadDue(T0 + 20 * HOUR, null, 1_000);
      await store.close();
      await check('after unparking 20 h');
      const again = await open(prefix);
      try {
        assert.deepEqual(await again.tasks.dueHistogram({ from: T0, to: T0 + 72 * HOUR, bucketMs: HOUR }), { counts: await pendingByHour(again, T0, 72), coveredUntil: T0 + 72 * HOUR });
        assert.deepEqual((await again.tasks.dueHistogram({ from: T0, to: T0 + 72 * HOUR, bucketMs: HOUR, topic: 'mail' })).counts, await pendingByHour(again, T0, 72, 'mail'));
        await again.tasks.loadDue(Number.POSITIVE_INFINITY, null, 1_000);
        await check('after unparking everything');
        assert.deepEqual(await parkedCounts(prefix), {});
      } finally {
        await again.close();
      }
    } finally {
      await store.close();
    }
  });

  it('takes a task out of the parked counts once when its id is twice in a park list', async () => {
    const prefix = `p${++namespaces}`;
    const store = await openRedisStore(redis.server.url, { clock: storeSystemClock, prefix, shards: 1 });
    const [shard] = buildKeyspace(prefix, 1).shards;
    try {
      const runAt = T0 + 5 * HOUR;
      // A parked task cancelled and purged, its id parked again in the same bucket: the list
      // holds the stale entry, then the new one, then two more tasks.
      await store.tasks.schedule([task('a', { runAt })], T0);
      await store.tasks.cancel('a', T0 + 1);
      await store.tasks.purge(T0 + 2, 10);
      await store.tasks.schedule([task('a', { runAt: runAt + 5 }), task('b', { runAt: runAt + 10 }), task('c', { runAt: runAt + 11, topic: 'mail' })], T0 + 3);
      const bucket = parkBucketOf(runAt);
      assert.deepEqual(await redis.admin.lrange(shard!.park(bucket), 0, -1), ['a', 'a', 'b', 'c']);
      const hour = Math.floor(runAt / HOUR);
      assert.deepEqual(await parkedCounts(prefix, 1), sorted({ [hour]: 3, [`${hour}:orders`]: 2, [`${hour}:mail`]: 1 }));
      // Unpark the two entries of 'a' alone.
      await unparkScript(redis.admin, shard!, bucket + 1, [bucket], 2);
      assert.deepEqual(await parkedCounts(prefix, 1), sorted({ [hour]: 2, [`${hour}:orders`]: 1, [`${hour}:mail`]: 1 }));
      assert.deepEqual(await parkedCounts(prefix, 1), await parkedReference(prefix, 1));
      // And 'b' twice: once as parked, once (from a second call) as already in `delayed`.
      await redis.admin.lpush(shard!.park(bucket), 'b');
      await unparkScript(redis.admin, shard!, bucket + 1, [bucket], 1);
      await unparkScript(redis.admin, shard!, bucket + 1, [bucket], 1);
      assert.deepEqual(await parkedCounts(prefix, 1), sorted({ [hour]: 1, [`${hour}:mail`]: 1 }));
      assert.deepEqual(await parkedCounts(prefix, 1), await parkedReference(prefix, 1));
    } finally {
      await store.close();
    }
  });

  it('counts a namespace parked before the counts from past its last park list, and reads the older lists', async () => {
    const prefix = `p${++namespaces}`;
    const keys = buildKeyspace(prefix, SHARDS);
    const old = await open(prefix);
    await old.tasks.schedule(Array.from({ length: 40 }, (_, i) => task(`old${i}`, { topic: i % 2 ? 'mail' : 'orders', runAt: T0 + 2 * HOUR + i * 37 * 60_000 })), T0);
    await old.close();
    // As a delayq without the counts left it: park lists, no counts.
    for (const shard of keys.shards) await redis.admin.del(shard.parkedCounts);
    const store = await open(prefix);
    try {
      const froms = await Promise.all(keys.shards.map(async (shard) => Number(await redis.admin.hget(shard.parkedCounts, 'from'))));
      for (const [i, shard] of keys.shards.entries()) assert.equal(froms[i], Number((await redis.admin.zrange(shard.parked, -1, -1))[0]) + 1);
      assert.deepEqual(await parkedCounts(prefix), {}, 'the older lists are not counted');
      // New tasks among the older lists and beyond them, old ones cancelled and rescheduled.
      await store.tasks.schedule(Array.from({ length: 40 }, (_, i) => task(`new${i}`, { topic: i % 2 ? 'mail' : 'orders', runAt: T0 + 2 * HOUR + i * 53 * 60_000 })), T0 + 1);
      for (let i = 0; i < 40; i += 5) await store.tasks.cancel(`old${i}`, T0 + 2);
      for (let i = 1; i < 40; i += 7) await store.tasks.reschedule(`old${i}`, T0 + 70 * HOUR + i, T0 + 2);
      for (let i = 2; i < 40; i += 6) await store.tasks.cancel(`new${i}`, T0 + 2);
      await store.close();
      assert.deepEqual(await parkedCounts(prefix), await parkedReference(prefix));
      const again = await open(prefix);
      try {
        for (const topic of [undefined, 'mail']) {
          const got = await again.tasks.dueHistogram({ from: T0, to: T0 + 48 * HOUR, bucketMs: HOUR, ...(topic ? { topic } : {}) });
          assert.deepEqual(got, { counts: await pendingByHour(again, T0, 48, topic), coveredUntil: T0 + 48 * HOUR });
        }
        await again.tasks.loadDue(Number.POSITIVE_INFINITY, null, 1_000);
        assert.deepEqual(await parkedCounts(prefix), {});
      } finally {
        await again.close();
      }
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
          await store.tasks.schedule(
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

/** The parked counts of a namespace (keys.ts `parkedh`), summed over its shards, without the `from` markers. */
async function parkedCounts(prefix: string, shards = SHARDS): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const shard of buildKeyspace(prefix, shards).shards)
    for (const [field, value] of Object.entries(await redis.admin.hgetall(shard.parkedCounts))) if (field !== 'from') out[field] = (out[field] ?? 0) + Number(value);
  return sorted(out);
}

/**
 * What the parked counts must be, from the tasks themselves: every pending task that is
 * not in `delayed`, by hour of runAt and by hour and topic, of the buckets a shard counts.
 */
async function parkedReference(prefix: string, shards = SHARDS): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const shard of buildKeyspace(prefix, shards).shards) {
    const countedFrom = Number((await redis.admin.hget(shard.parkedCounts, 'from')) ?? 0);
    for (const [id, body] of Object.entries(await redis.admin.hgetall(shard.pool))) {
      const { record, seq } = decodeTask(id, body);
      if (record.state !== 'pending' || parkBucketOf(record.runAt) < countedFrom) continue;
      const member = Buffer.concat([Buffer.from([Math.floor(seq / 2 ** 48)]), Buffer.alloc(6), Buffer.from(id)]);
      member.writeUIntBE(seq % 2 ** 48, 1, 6);
      if ((await redis.admin.zscore(shard.delayed, member)) !== null) continue;
      const hour = Math.floor(record.runAt / HOUR);
      for (const field of [`${hour}`, `${hour}:${record.topic}`]) out[field] = (out[field] ?? 0) + 1;
    }
  }
  return sorted(out);
}

function sorted(counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Every pending task by hour of runAt, from list(): what dueHistogram by the hour must answer. */
async function pendingByHour(store: TaskStore, from: number, hours: number, topic?: string): Promise<number[]> {
  const counts = new Array<number>(hours).fill(0);
  for (const t of await store.tasks.list({ state: 'pending', limit: 100_000 }))
    if ((topic === undefined || t.topic === topic) && t.runAt >= from && t.runAt < from + hours * HOUR) counts[Math.floor((t.runAt - from) / HOUR)]!++;
  return counts;
}

async function listsOf(prefix: string): Promise<number> {
  let lists = 0;
  for (const shard of buildKeyspace(prefix, SHARDS).shards) lists += await redis.admin.zcard(shard.parked);
  return lists;
}

async function usedMemory(): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.admin.info('memory'))?.[1] ?? 0);
}
