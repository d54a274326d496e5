/**
 * A topic's pause and flow limits hold its tasks with their own push url too (issue 36
 * item 1: "a paused topic delivers nothing, neither pull reserves nor pushes"): those tasks
 * wait in their topic's push lane (core/task/model.ts laneOf), which the dispatcher gates
 * by the topic like the topic's own consumers. On the memory store with a manual clock,
 * then across two processes on one Redis and on one PostgreSQL schema.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { PushRequest } from '../../src/core/push.js';
import { systemClock } from '../../src/engine/timers/wall-clock.js';
import { DelayQueue } from '../../src/open-queue.js';
import { flush, T0 } from '../helpers/engine.js';
import { dropSchema, freshSchema, storeUrl } from '../helpers/postgres.js';
import { newSecret, openPushing, ScriptedTransport, testSigner } from '../helpers/push.js';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis-servers.js';

const URL_MAIL = 'https://mail.example.com/hook';
const URL_OTHER = 'https://other.example.com/hook';

function sentIds(transport: ScriptedTransport, url?: string): string[] {
  return transport.sent.filter((s) => url === undefined || s.request.url === url).map((s) => s.request.headers['webhook-id']!);
}

describe('a topic gate holds its tasks with their own url (memory)', () => {
  it('a paused topic pushes nothing; other topics push on; on resume what fell due is pushed in runAt order', async () => {
    const { q, clock, transport } = await openPushing({ pushSecret: newSecret() });
    try {
      assert.equal(await q.topics.pause('mail'), true);
      await q.scheduleMany([
        { id: 'm2', topic: 'mail', runAt: T0 + 2_000, url: URL_MAIL },
        { id: 'm1', topic: 'mail', runAt: T0 + 1_000, url: URL_MAIL },
        { id: 'o1', topic: 'other', runAt: T0 + 1_000, url: URL_OTHER },
      ]);
      clock.advance(3_000);
      await flush();
      assert.deepEqual(sentIds(transport), ['o1'], 'the other topic pushes; the paused one does not');
      const held = await q.get('m1');
      assert.deepEqual([held?.state, held?.attempts, held?.runAt], ['pending', 0, T0 + 1_000], 'pending, no attempt charged, its due time kept');
      assert.equal((await q.stats()).ready['mail'], 2, "its push lane's backlog counts as the topic's");
      await q.topics.resume('mail');
      await flush();
      assert.deepEqual(sentIds(transport), ['o1', 'm1', 'm2']);
      assert.equal((await q.get('m2'))?.state, 'completed');
    } finally {
      await q.close();
    }
  });

  it("a topic's rate limit spaces its own-url pushes: a burst, then one per token; the wait charges no attempt", async () => {
    const { q, clock, transport } = await openPushing({ pushSecret: newSecret() });
    try {
      await q.topics.setLimits('mail', { rate: 10, periodMs: 1_000, burst: 2 });
      await q.scheduleMany(Array.from({ length: 5 }, (_, i) => ({ id: `m${i}`, topic: 'mail', runAt: T0 + 100, url: URL_MAIL })));
      clock.advance(100);
      await flush();
      assert.deepEqual(sentIds(transport), ['m0', 'm1'], 'the burst');
      clock.advance(100);
      await flush();
      assert.deepEqual(sentIds(transport), ['m0', 'm1', 'm2'], 'one per 100 ms token');
      const waiting = await q.get('m4');
      assert.deepEqual([waiting?.state, waiting?.attempts], ['pending', 0]);
      clock.advance(200);
      await flush();
      assert.deepEqual(sentIds(transport), ['m0', 'm1', 'm2', 'm3', 'm4']);
    } finally {
      await q.close();
    }
  });

  it("a topic's concurrency counts its own-url pushes in flight with its subscription's", async () => {
    const { q, clock, transport } = await openPushing({ pushSecret: newSecret() });
    try {
      transport.hold = true;
      await q.topics.setLimits('mail', { concurrency: 1 });
      await q.scheduleMany([
        { id: 'm0', topic: 'mail', runAt: T0 + 100, url: URL_MAIL },
        { id: 'm1', topic: 'mail', runAt: T0 + 101, url: URL_MAIL },
      ]);
      clock.advance(200);
      await flush();
      assert.deepEqual(sentIds(transport), ['m0'], 'one in flight');
      transport.release();
      await flush();
      clock.advance(60);
      await flush();
      assert.deepEqual(sentIds(transport), ['m0', 'm1'], 'the ack freed the slot');
    } finally {
      transport.hold = false;
      for (const _ of [...transport.held]) transport.release();
      await q.close();
    }
  });
});

/** Two queues on one shared store, each pushing through its own scripted transport. */
async function twoPushing(store: string): Promise<{ a: DelayQueue; b: DelayQueue; transports: ScriptedTransport[]; close: () => Promise<void> }> {
  const pushSecret = newSecret();
  const transports = [new ScriptedTransport(systemClock), new ScriptedTransport(systemClock)];
  const open = (transport: ScriptedTransport): Promise<DelayQueue> => DelayQueue.open({ store, pushSecret, pauseSyncMs: 200, push: { transport, signer: testSigner } });
  const a = await open(transports[0]!);
  const b = await open(transports[1]!);
  return { a, b, transports, close: async () => void (await Promise.all([a.close(), b.close()])) };
}

function pushedIds(transports: readonly ScriptedTransport[], pick: (request: PushRequest) => boolean): string[] {
  return transports.flatMap((t) => t.sent.filter((s) => pick(s.request)).map((s) => s.request.headers['webhook-id']!)).sort();
}

async function until(what: string, done: () => boolean, withinMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > withinMs) assert.fail(`${what}: not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A pause through one process holds the topic's own-url pushes in both; resume lets them go. */
async function pauseAcrossProcesses(store: string): Promise<void> {
  const { a, b, transports, close } = await twoPushing(store);
  try {
    await a.topics.pause('mail');
    await until('b learnt the pause', () => b.topics.paused().includes('mail'), 2_000);
    await a.scheduleMany([
      ...Array.from({ length: 6 }, (_, i) => ({ id: `m${i}`, topic: 'mail', delayMs: i * 10, url: URL_MAIL })),
      { id: 'o1', topic: 'other', delayMs: 10, url: URL_OTHER },
    ]);
    await until('the other topic pushed', () => pushedIds(transports, (r) => r.url === URL_OTHER).length === 1);
    // Past every runAt, and past a few pause reads: nothing of the paused topic went out.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(pushedIds(transports, (r) => r.url === URL_MAIL), [], 'no push of the paused topic from either process');
    assert.equal((await a.stats()).topics['mail']?.pending, 6);
    await b.topics.resume('mail');
    await until('pushed after resume', () => pushedIds(transports, (r) => r.url === URL_MAIL).length >= 6);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(pushedIds(transports, (r) => r.url === URL_MAIL), ['m0', 'm1', 'm2', 'm3', 'm4', 'm5'], 'each once');
  } finally {
    await close();
  }
}

describe('a topic gate holds its tasks with their own url across processes', () => {
  let redis: RedisServer | undefined;
  const schemas: string[] = [];
  after(async () => {
    await redis?.stop();
    redis?.remove();
    for (const schema of schemas) await dropSchema(schema);
  });

  it('on one Redis', { skip: redisSkip(), timeout: 30_000 }, async () => {
    redis = await startRedis();
    await pauseAcrossProcesses(`${redis.url}?prefix=pushgate${process.pid}&shards=4`);
  });

  it('on one PostgreSQL schema', { timeout: 30_000 }, async () => {
    const schema = freshSchema('pushgate');
    schemas.push(schema);
    await pauseAcrossProcesses(storeUrl(schema));
  });
});
