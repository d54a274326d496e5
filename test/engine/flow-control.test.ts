/**
 * Topic flow limits in the engine (issue 36, ADR 0043), on the memory store with a manual
 * clock: what a limit lets through and when, held-back tasks kept in runAt order and never
 * charged an attempt, concurrency freed by settlements, and limits changed while consumers
 * wait.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import type { ManualClock } from '../../src/core/manual-clock.js';
import type { Delivery } from '../../src/index.js';
import { DelayQueue } from '../../src/open-queue.js';
import { flush, openManual, T0 } from '../helpers/engine.js';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis-servers.js';

const openQueue = openManual;

/** Lets what is due by now run, then moves the clock `ms` and lets what fell due run. */
async function settle(clock: ManualClock, ms = 0): Promise<void> {
  await flush();
  if (ms > 0) {
    clock.advance(ms);
    await flush();
  }
}

describe('topic flow limits (engine)', () => {
  it('a rate lets a burst through at once, then a task per token, in runAt order, charging no attempt for the wait', async () => {
    const { q, clock } = await openQueue();
    try {
      await q.topics.setLimits('mail', { rate: 10, periodMs: 1_000, burst: 3 });
      await q.scheduleMany(Array.from({ length: 8 }, (_, i) => ({ id: `m${i}`, topic: 'mail', runAt: T0 + i })));
      await settle(clock, 10);
      const first = await q.reserve('mail', { max: 10 });
      assert.deepEqual(first.map((d) => d.id), ['m0', 'm1', 'm2']);
      // Nothing more now: the bucket is empty and the next token comes 100 ms after the take.
      assert.deepEqual(await q.reserve('mail', { max: 10 }), []);
      await settle(clock, 100);
      const second = await q.reserve('mail', { max: 10 });
      assert.deepEqual(second.map((d) => d.id), ['m3']);
      for (const d of [...first, ...second]) assert.equal(d.attempt, 1);
      const waiting = q.reserve('mail', { max: 10, waitMs: 5_000 });
      await settle(clock, 100);
      assert.deepEqual((await waiting).map((d) => d.id), ['m4']);
      assert.ok(((await q.stats()).throttled['mail'] ?? 0) >= 1, 'a refused admission is counted');
      const held = await q.get('m5');
      assert.equal(held?.state, 'pending');
      assert.equal(held?.attempts, 0);
    } finally {
      await q.close();
    }
  });

  it('a concurrency caps the deliveries in flight; an ack or a nack frees a slot', async () => {
    const { q, clock } = await openQueue();
    try {
      await q.topics.setLimits('jobs', { concurrency: 2 });
      await q.scheduleMany(Array.from({ length: 5 }, (_, i) => ({ id: `j${i}`, topic: 'jobs', runAt: T0 + i })));
      await settle(clock, 10);
      const first = await q.reserve('jobs', { max: 10 });
      assert.deepEqual(first.map((d) => d.id), ['j0', 'j1']);
      assert.deepEqual(await q.reserve('jobs', { max: 10 }), []);
      const waiting = q.reserve('jobs', { max: 10, waitMs: 5_000 });
      await q.ack(first[0]!.id, first[0]!.receipt);
      await settle(clock, 60);
      assert.deepEqual((await waiting).map((d) => d.id), ['j2']);
      await q.nack(first[1]!.id, first[1]!.receipt, { error: 'later', delayMs: 60_000 });
      await settle(clock);
      assert.deepEqual((await q.reserve('jobs', { max: 10 })).map((d) => d.id), ['j3']);
    } finally {
      await q.close();
    }
  });

  it('clearing the limits lets a waiting reserve through; other topics never wait', async () => {
    const { q, clock } = await openQueue();
    try {
      await q.topics.setLimits('mail', { rate: 1, periodMs: 60_000 });
      await q.scheduleMany([
        { id: 'a', topic: 'mail', runAt: T0 },
        { id: 'b', topic: 'mail', runAt: T0 },
        { id: 'o', topic: 'other', runAt: T0 },
      ]);
      await settle(clock, 1);
      assert.equal((await q.reserve('mail', { max: 5 })).length, 1);
      const waiting = q.reserve('mail', { max: 5, waitMs: 30_000 });
      assert.deepEqual((await q.reserve('other', { max: 5 })).map((d) => d.id), ['o']);
      assert.equal(await q.topics.clearLimits('mail'), true);
      await settle(clock, 1);
      assert.deepEqual((await waiting).map((d) => d.id), ['b']);
      assert.equal(await q.topics.getLimits('mail'), null);
    } finally {
      await q.close();
    }
  });

  it('limits are checked: a clear error, nothing stored', async () => {
    const { q } = await openQueue();
    try {
      for (const bad of [{ rate: 0 }, { rate: 1.5 }, { concurrency: -1 }, { periodMs: 0, rate: 1 }]) {
        await assert.rejects(q.topics.setLimits('mail', bad), (error: unknown) => isDelayQError(error, 'INVALID_OPTION'), JSON.stringify(bad));
      }
      for (const bad of [{}, { burst: 3 }, { rate: 5, extra: 1 }, null]) {
        await assert.rejects(q.topics.setLimits('mail', bad as never), (error: unknown) => isDelayQError(error, 'INVALID_ARGUMENT'), JSON.stringify(bad));
      }
      assert.deepEqual({ ...(await q.topics.listLimits()) }, {});
      assert.deepEqual(await q.topics.setLimits('mail', { rate: 5 }), { rate: 5, periodMs: 1_000, burst: 5, concurrency: null });
    } finally {
      await q.close();
    }
  });
});

let redis: RedisServer | undefined;
after(async () => {
  await redis?.stop();
  redis?.remove();
});

describe('topic flow limits across processes (Redis)', { skip: redisSkip() }, () => {
  it('two queues on one Redis share one bucket and one set of slots', async () => {
    redis = await startRedis();
    const url = `${redis.url}?prefix=flow${process.pid}`;
    const pauseSyncMs = 100;
    const a = await DelayQueue.open({ store: url, pauseSyncMs });
    const b = await DelayQueue.open({ store: url, pauseSyncMs });
    try {
      // A token a minute: the bucket does not refill while the test runs.
      await a.topics.setLimits('mail', { rate: 1, periodMs: 60_000, burst: 3 });
      await a.topics.setLimits('jobs', { concurrency: 2 });
      const setAt = Date.now();
      while ((await b.stats()).limits['jobs'] === undefined) {
        assert.ok(Date.now() - setAt < pauseSyncMs * 20, 'b learnt the limits');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await a.scheduleMany(Array.from({ length: 6 }, (_, i) => ({ id: `m${i}`, topic: 'mail' })));
      // Both ask, over and over, for more than the burst: together they get the burst, no more.
      const got = { a: 0, b: 0 };
      const asking = Date.now();
      while (Date.now() - asking < 1_500) {
        const [fromA, fromB] = await Promise.all([a.reserve('mail', { max: 2, waitMs: 200 }), b.reserve('mail', { max: 10, waitMs: 200 })]);
        got.a += fromA.length;
        got.b += fromB.length;
      }
      assert.equal(got.a + got.b, 3, `the burst, shared: a ${got.a}, b ${got.b}`);

      await a.scheduleMany(Array.from({ length: 4 }, (_, i) => ({ id: `j${i}`, topic: 'jobs' })));
      const jobs: Delivery[] = [];
      const reserving = Date.now();
      while (Date.now() - reserving < 1_500) jobs.push(...(await a.reserve('jobs', { max: 10, waitMs: 200, ttrMs: 60_000 })));
      assert.equal(jobs.length, 2, 'two in flight at most');
      assert.deepEqual(await b.reserve('jobs', { max: 10, waitMs: 300, ttrMs: 60_000 }), []);
      // An ack through b (a process that did not reserve it) frees the slot for everyone.
      await b.ack(jobs[0]!.id, jobs[0]!.receipt);
      const third = await b.reserve('jobs', { max: 10, waitMs: 3_000, ttrMs: 60_000 });
      assert.equal(third.length, 1);
      assert.ok(((await b.stats()).throttled['jobs'] ?? 0) >= 1);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
