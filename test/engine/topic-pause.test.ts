// q.topics.pause / resume on the engine (issue 36 item 1, ADR 0040): a paused topic delivers
// nothing, its waiting reserves hold, what falls due is delivered in runAt order on resume;
// durable on SQLite across a restart; honoured by another process on one Redis within
// pauseSyncMs.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import { DelayQueue } from '../../src/open-queue.js';
import { flush, openManual, T0 } from '../helpers/engine.js';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis-servers.js';

test('a paused topic delivers nothing; a waiting reserve holds; on resume what fell due goes out in runAt order', async () => {
  const { q, clock } = await openManual();
  try {
    await q.scheduleMany([
      { id: 'a3', topic: 'mail', delayMs: 3_000 },
      { id: 'a1', topic: 'mail', delayMs: 1_000 },
      { id: 'b1', topic: 'other', delayMs: 1_000 },
    ]);
    assert.equal(await q.topics.pause('mail'), true);
    assert.equal(await q.topics.pause('mail'), false, 'paused already');
    assert.deepEqual(q.topics.paused(), ['mail']);
    let answered: string[] | null = null;
    const waiting = q.reserve('mail', { max: 10, waitMs: 60_000 }).then((got) => (answered = got.map((d) => d.id)));
    clock.advance(2_000);
    await flush();
    // Scheduled while paused, due between the others: it takes its place by runAt.
    await q.schedule({ id: 'a2', topic: 'mail', runAt: T0 + 2_500 });
    clock.advance(2_000);
    await flush();
    assert.equal(answered, null, 'the waiting reserve holds while mail is paused');
    assert.deepEqual((await q.reserve('mail', { max: 10 })).map((d) => d.id), [], 'a reserve answers nothing of a paused topic');
    assert.deepEqual((await q.reserve('other', { max: 10 })).map((d) => d.id), ['b1'], 'other topics go on');
    const stats = await q.stats();
    assert.equal(stats.topics['mail']?.pending, 3, 'its tasks stay pending');
    assert.equal((await q.get('a1'))?.runAt, T0 + 1_000, 'and keep their due times');

    assert.equal(await q.topics.resume('mail'), true);
    assert.equal(await q.topics.resume('mail'), false, 'not paused');
    assert.deepEqual(q.topics.paused(), []);
    await waiting;
    assert.deepEqual(answered, ['a1', 'a2', 'a3'], 'delivered on resume, in runAt order');
  } finally {
    await q.close();
  }
});

test('a worker of a paused topic handles nothing until it is resumed; tasks are never delivered before their runAt', async () => {
  const { q, clock } = await openManual();
  try {
    await q.topics.pause('mail');
    const handled: [string, number][] = [];
    q.work('mail', (d) => void handled.push([d.id, clock.now()]));
    await q.scheduleMany([
      { id: 'm1', topic: 'mail', delayMs: 1_000 },
      { id: 'm2', topic: 'mail', delayMs: 5_000 },
    ]);
    clock.advance(2_000);
    await flush();
    assert.deepEqual(handled, []);
    await q.topics.resume('mail');
    await flush();
    assert.deepEqual(handled, [['m1', T0 + 2_000]]);
    clock.advance(3_000);
    await flush();
    assert.deepEqual(handled, [['m1', T0 + 2_000], ['m2', T0 + 5_000]], 'm2 at its own time, not before');
  } finally {
    await q.close();
  }
});

test('pause and resume check the topic: INVALID_TOPIC', async () => {
  const { q } = await openManual();
  try {
    await assert.rejects(q.topics.pause(''), (error: unknown) => isDelayQError(error, 'INVALID_TOPIC'));
    await assert.rejects(q.topics.resume(42 as unknown as string), (error: unknown) => isDelayQError(error, 'INVALID_TOPIC'));
  } finally {
    await q.close();
  }
});

test('SQLite: a pause survives a restart, and what fell due meanwhile goes out in runAt order on resume', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'delayq-pause-'));
  const store = `sqlite:${join(dir, 'q.db')}`;
  try {
    const first = await DelayQueue.open({ store });
    await first.topics.pause('mail');
    // Due already (runAt in the past), in the opposite order of their ids' creation.
    const now = Date.now();
    await first.scheduleMany([
      { id: 's2', topic: 'mail', runAt: now - 1_000 },
      { id: 's1', topic: 'mail', runAt: now - 2_000 },
    ]);
    await flush();
    assert.deepEqual((await first.reserve('mail', { max: 10 })).map((d) => d.id), []);
    await first.close();

    const second = await DelayQueue.open({ store });
    try {
      assert.deepEqual(second.topics.paused(), ['mail'], 'read at open');
      await flush();
      assert.deepEqual((await second.reserve('mail', { max: 10 })).map((d) => d.id), [], 'held from the first reserve after open');
      await second.topics.resume('mail');
      assert.deepEqual((await second.reserve('mail', { max: 10, waitMs: 1_000 })).map((d) => d.id), ['s1', 's2']);
    } finally {
      await second.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

let redis: RedisServer | undefined;
after(async () => {
  await redis?.stop();
  redis?.remove();
});

test('Redis: a pause through one queue holds in another on the same Redis within pauseSyncMs, and a waiting reserve there is cut', { skip: redisSkip() }, async () => {
  redis = await startRedis();
  const url = `${redis.url}?prefix=pause${process.pid}`;
  const pauseSyncMs = 200;
  const a = await DelayQueue.open({ store: url, pauseSyncMs });
  const b = await DelayQueue.open({ store: url, pauseSyncMs });
  try {
    // b waits on mail before the pause; nothing is due yet.
    let answered: string[] | null = null;
    const waiting = b.reserve('mail', { max: 10, waitMs: 20_000 }).then((got) => (answered = got.map((d) => d.id)));
    await a.topics.pause('mail');
    const pausedAt = Date.now();
    while (!b.topics.paused().includes('mail')) {
      assert.ok(Date.now() - pausedAt < pauseSyncMs * 5, `b learnt the pause within ${pauseSyncMs} ms and a read`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Due at once, promoted into the ready lists; neither process hands it out.
    await a.schedule({ id: 'r1', topic: 'mail' });
    await a.schedule({ id: 'r2', topic: 'mail', delayMs: 50 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(answered, null, "b's waiting reserve holds");
    assert.deepEqual(await a.reserve('mail', { max: 10 }), []);
    assert.equal((await a.stats()).topics['mail']?.pending, 2);

    await a.topics.resume('mail');
    await waiting;
    // Both delivered on resume; across shards Redis keeps no global runAt order (docs/redis.md).
    assert.deepEqual([...(answered as string[] | null ?? [])].sort(), ['r1', 'r2']);
  } finally {
    await a.close();
    await b.close();
  }
});
