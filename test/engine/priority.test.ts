// Task priorities (issue 49 point 1, ADR 0057): among due tasks of a topic, higher priority
// is delivered first, runAt order within one priority, never before runAt; on every store,
// and across processes on the shared ones (Redis, PostgreSQL). The scenario of the issue:
// ordinary and urgent tasks fall due together on a paused topic; on resume the urgent go first.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import { DelayQueue } from '../../src/open-queue.js';
import { flush, openManual, T0 } from '../helpers/engine.js';
import { openPushing } from '../helpers/push.js';
import { dropSchema, freshSchema, storeUrl } from '../helpers/postgres.js';
import { cli, redisSkip, startRedis, type RedisServer } from '../helpers/redis-servers.js';

test('memory: among due tasks, higher priority first, runAt order within one; never before runAt', async () => {
  const { q, clock } = await openManual();
  try {
    await q.topics.pause('jobs');
    await q.scheduleMany([
      { id: 'low', topic: 'jobs', delayMs: 100, priority: -5 },
      { id: 'o1', topic: 'jobs', delayMs: 200 },
      { id: 'u2', topic: 'jobs', delayMs: 400, priority: 10 },
      { id: 'o2', topic: 'jobs', delayMs: 300, priority: 0 },
      { id: 'u1', topic: 'jobs', delayMs: 500, priority: 10 },
      { id: 'top', topic: 'jobs', delayMs: 600, priority: 100 },
      { id: 'later', topic: 'jobs', delayMs: 5_000, priority: 100 },
    ]);
    clock.advance(1_000);
    await flush();
    await q.topics.resume('jobs');
    assert.deepEqual((await q.reserve('jobs', { max: 2 })).map((d) => d.id), ['top', 'u2']);
    assert.deepEqual((await q.reserve('jobs', { max: 10 })).map((d) => d.id), ['u1', 'o1', 'o2', 'low'], 'later is not due: its priority does not make it so');
    assert.equal((await q.get('later'))?.state, 'pending');
    assert.equal((await q.get('u1'))?.priority, 10);
    assert.equal((await q.get('o1'))?.priority, 0, 'the default');
    clock.advance(4_000);
    await flush();
    assert.deepEqual((await q.reserve('jobs', { max: 10 })).map((d) => d.id), ['later']);
  } finally {
    await q.close();
  }
});

test('push: among due tasks of a pushed topic, higher priority is pushed first, runAt order within one', async () => {
  // One push at a time, so the order they leave in is the order they were handed out.
  const { q, clock, transport } = await openPushing({}, { maxInFlight: 1 });
  try {
    await q.setPush('jobs', { url: 'https://hooks.example.com/jobs' });
    await q.topics.pause('jobs');
    await q.scheduleMany([
      { id: 'low', topic: 'jobs', delayMs: 100, priority: -5 },
      { id: 'o1', topic: 'jobs', delayMs: 200 },
      { id: 'u2', topic: 'jobs', delayMs: 400, priority: 10 },
      { id: 'o2', topic: 'jobs', delayMs: 300 },
      { id: 'u1', topic: 'jobs', delayMs: 500, priority: 10 },
      { id: 'later', topic: 'jobs', delayMs: 5_000, priority: 100 },
    ]);
    clock.advance(1_000);
    await flush();
    await q.topics.resume('jobs');
    for (let i = 0; i < 50 && transport.sent.length < 5; i++) {
      clock.advance(10);
      await flush();
    }
    const pushed = transport.sent.map((s) => s.request.headers['webhook-id']);
    assert.deepEqual(pushed, ['u2', 'u1', 'o1', 'o2', 'low'], 'later is not due: its priority does not make it so');
    clock.advance(4_000);
    await flush();
    assert.deepEqual(transport.sent.map((s) => s.request.headers['webhook-id']).slice(5), ['later']);
  } finally {
    await q.close();
  }
});

test('priority is an integer from -100 to 100: anything else is INVALID_OPTION, on schedule and in a batch', async () => {
  const { q } = await openManual();
  try {
    for (const bad of [101, -101, 1.5, '3', null, Number.NaN]) {
      await assert.rejects(
        q.schedule({ topic: 'jobs', priority: bad as number }),
        (error: unknown) => isDelayQError(error, 'INVALID_OPTION') && /priority/.test((error as Error).message),
        String(bad),
      );
    }
    await assert.rejects(q.scheduleMany([{ topic: 'jobs' }, { topic: 'jobs', priority: 1_000 }]), (error: unknown) => isDelayQError(error, 'INVALID_OPTION'));
    const ok = await q.schedule({ id: 'edge', topic: 'jobs', priority: -100 });
    assert.equal(ok.created, true);
    assert.equal((await q.get('edge'))?.priority, -100);
  } finally {
    await q.close();
  }
});

test('a recurring schedule gives its priority to every occurrence, which goes before ordinary tasks due with it; out of bounds is INVALID_OPTION', async () => {
  const { q, clock } = await openManual();
  try {
    await q.topics.pause('jobs');
    const { schedule } = await q.schedules.upsert('beat', { topic: 'jobs', everyMs: 1_000, priority: 20 });
    assert.equal(schedule.priority, 20);
    await q.scheduleMany(Array.from({ length: 3 }, (_, i) => ({ id: `plain${i}`, topic: 'jobs', delayMs: 500 + i })));
    clock.advance(1_500);
    await flush(30);
    await q.topics.resume('jobs');
    const ids = (await q.reserve('jobs', { max: 10 })).map((d) => d.id);
    assert.deepEqual(ids, [`beat:${T0}`, `beat:${T0 + 1_000}`, 'plain0', 'plain1', 'plain2']);
    assert.equal((await q.get(`beat:${T0}`))?.priority, 20);
    await assert.rejects(q.schedules.upsert('bad', { topic: 'jobs', everyMs: 1_000, priority: 200 }), (error: unknown) => isDelayQError(error, 'INVALID_OPTION'));
    const { changed } = await q.schedules.upsert('beat', { topic: 'jobs', everyMs: 1_000, priority: 0 });
    assert.equal(changed, true, 'a new priority is a new definition');
  } finally {
    await q.close();
  }
});

/**
 * The case on a durable store: 50 ordinary and 10 urgent tasks (and 5 low ones) fall
 * due together on a paused topic; `consumer` (another process's queue on a shared store)
 * takes the urgent ten first on resume, then the ordinary in runAt order, then the low.
 */
async function pausedBacklog(
  producer: DelayQueue,
  consumer: DelayQueue,
  runAtOrder: 'exact' | 'per shard' = 'exact',
  /** How many tasks wait ready in the store (Redis: its ready lists and sets), when the store can tell. */
  readyCount?: () => number,
): Promise<void> {
  await producer.topics.pause('jobs');
  const base = Date.now() + 300;
  const tasks = [
    ...Array.from({ length: 5 }, (_, i) => ({ id: `l${i}`, topic: 'jobs', runAt: base + i, priority: -1 })),
    ...Array.from({ length: 50 }, (_, i) => ({ id: `o${String(i).padStart(2, '0')}`, topic: 'jobs', runAt: base + 10 + i * 3 })),
    ...Array.from({ length: 10 }, (_, i) => ({ id: `u${i}`, topic: 'jobs', runAt: base + 60 + i * 5, priority: 7 })),
    { id: 'future', topic: 'jobs', runAt: base + 60_000, priority: 100 },
  ];
  await producer.scheduleMany(tasks);
  // Everything but `future` falls due while paused, and is made ready (promoted) meanwhile.
  while (Date.now() < base + 1_500) await new Promise((resolve) => setTimeout(resolve, 50));
  // On Redis, all of them are in the ready lists and sets first (a shard whose lease moved meanwhile promotes later).
  const readyBy = Date.now() + 10_000;
  while (readyCount !== undefined && readyCount() < 65 && Date.now() < readyBy) await new Promise((resolve) => setTimeout(resolve, 50));
  const pausedUntil = Date.now() + 5_000;
  while (!consumer.topics.paused().includes('jobs') && Date.now() < pausedUntil) await new Promise((resolve) => setTimeout(resolve, 20));
  await producer.topics.resume('jobs');
  const got: string[] = [];
  const deadline = Date.now() + 10_000;
  while (got.length < 65 && Date.now() < deadline) {
    const batch = await consumer.reserve('jobs', { max: 10, waitMs: 1_000 });
    for (const d of batch) got.push(d.id);
  }
  const expected = [...tasks.slice(55, 65), ...tasks.slice(5, 55), ...tasks.slice(0, 5)].map((t) => t.id);
  if (runAtOrder === 'exact') assert.deepEqual(got, expected);
  else {
    // Several shards: each keeps its own runAt order, and across them what falls due in the
    // same moment has no order of its own; the priorities are strict all the same.
    const rank = (id: string): number => (id.startsWith('u') ? 0 : id.startsWith('o') ? 1 : 2);
    assert.deepEqual(got.map(rank), expected.map(rank), got.join(' '));
    assert.deepEqual([...got].sort(), [...expected].sort());
  }
  assert.equal((await consumer.get('future'))?.state, 'pending', 'never before its runAt');
  assert.equal((await consumer.get('u3'))?.priority, 7);
}

test('SQLite: urgent tasks of a resumed topic go first', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'delayq-priority-'));
  const q = await DelayQueue.open({ store: `sqlite:${join(dir, 'q.db')}` });
  try {
    await pausedBacklog(q, q);
  } finally {
    await q.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

let redis: RedisServer | undefined;
after(async () => {
  await redis?.stop();
  redis?.remove();
});

test('Redis with 16 shards (the default): urgent tasks of a resumed topic go first, in another process too', { skip: redisSkip() }, async () => {
  redis ??= await startRedis();
  const url = `${redis.url}?prefix=prios${process.pid}`;
  const a = await DelayQueue.open({ store: url, pauseSyncMs: 100 });
  const b = await DelayQueue.open({ store: url, pauseSyncMs: 100 });
  try {
    const count = "local n = 0 for _, k in ipairs(redis.call('KEYS', ARGV[1] .. ':*:ready:jobs')) do n = n + redis.call('LLEN', k) end for _, k in ipairs(redis.call('KEYS', ARGV[1] .. ':*:readyp:jobs')) do n = n + redis.call('ZCARD', k) end return n";
    await pausedBacklog(a, b, 'per shard', () => Number(cli(redis!.port, 'EVAL', count, '0', `prios${process.pid}`).trim()));
  } finally {
    await b.close();
    await a.close();
  }
});

test('Redis with 1 shard: the exact order', { skip: redisSkip() }, async () => {
  redis ??= await startRedis();
  const url = `${redis.url}?prefix=prio1${process.pid}&shards=1`;
  const a = await DelayQueue.open({ store: url, pauseSyncMs: 100 });
  const b = await DelayQueue.open({ store: url, pauseSyncMs: 100 });
  try {
    await pausedBacklog(a, b);
  } finally {
    await b.close();
    await a.close();
  }
});

test('PostgreSQL: urgent tasks of a resumed topic go first, reserved by another process', async () => {
  const schema = freshSchema('prio');
  const a = await DelayQueue.open({ store: storeUrl(schema), pauseSyncMs: 100 });
  const b = await DelayQueue.open({ store: storeUrl(schema), pauseSyncMs: 100 });
  try {
    await pausedBacklog(a, b);
  } finally {
    await b.close();
    await a.close();
    await dropSchema(schema);
  }
});

