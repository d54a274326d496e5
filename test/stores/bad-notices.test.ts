/**
 * The reproductions of issue 45 on real servers: one forged message killed every delayq
 * process of a PostgreSQL schema (`SELECT pg_notify('delayq:<schema>:timers', 'a1 x
 * -Infinity 1')`, which needs no privilege: RangeError from TimingWheel.add) or of a Redis
 * namespace (`PUBLISH <prefix>:timers "a1 x abc 1"`), and a ready notice whose seq is not a
 * number drove a lane cursor to NaN (reserves answered 503). Now each is dropped, counted in
 * delayq_bad_notices_total{channel} and logged once, and the queue goes on delivering.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import type { Logger } from '../../src/core/ports/index.js';
import { DelayQueue } from '../../src/open-queue.js';
import { dropSchema, freshSchema, storeUrl, withClient } from '../helpers/postgres.js';
import { startRedis, type RedisServer } from '../helpers/redis-servers.js';

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const none = (): void => undefined;
  return { warnings, debug: none, info: none, error: none, warn: (_fields: object, message?: string) => void warnings.push(message ?? '') };
}

interface Backing {
  readonly name: string;
  url(): string;
  /** Sends as any client of the backing may. */
  send(channel: 'timers' | 'ready', message: string, topic: string): Promise<void>;
  drop(): Promise<void>;
}

/** Opens a queue with metrics, sends the messages, and checks that it goes on. */
async function survives(backing: Backing): Promise<void> {
  const registry = new Registry();
  const logger = recordingLogger();
  const q = await DelayQueue.open({ store: backing.url(), metrics: { registry }, logger });
  try {
    // A consumer waits on the topic first, so its ready channel is listened to.
    const waiting = q.reserve('mail', { max: 1, waitMs: 20_000 });
    await sleep(100);
    await backing.send('timers', 'a1 x -Infinity 1', 'mail');
    await backing.send('timers', 'a1 x abc 1', 'mail');
    await backing.send('ready', backing.name === 'redis' ? 'abc x' : 'mail 1 abc', 'mail');
    await backing.send('ready', backing.name === 'redis' ? 'NaN NaN' : 'mail NaN NaN', 'mail');
    await q.schedule({ id: 'after-the-notices', topic: 'mail', payload: 1 });
    const [task] = await waiting;
    assert.equal(task?.id, 'after-the-notices', 'delivered after the forged messages');
    await q.ack(task.id, task.receipt);
    for (let i = 0; i < 500 && (q.store.coordination?.badNotices?.().get('ready') ?? 0) < 2; i++) await sleep(20);
    assert.deepEqual(Object.fromEntries(q.store.coordination!.badNotices!()), { timers: 2, ready: 2 });
    const text = await registry.metrics();
    assert.match(text, /delayq_bad_notices_total\{channel="timers"\} 2/);
    assert.match(text, /delayq_bad_notices_total\{channel="ready"\} 2/);
    assert.equal(logger.warnings.filter((w) => /dropped a message on the timers channel/.test(w)).length, 1, logger.warnings.join('\n'));
    assert.equal(logger.warnings.filter((w) => /dropped a message on the ready channel/.test(w)).length, 1, logger.warnings.join('\n'));
    // The lane's cursor is whole: reserves go on answering.
    await q.schedule({ id: 'and-again', topic: 'mail', payload: 2 });
    assert.deepEqual((await q.reserve('mail', { max: 5, waitMs: 20_000 })).map((t) => t.id), ['and-again']);
  } finally {
    await q.close();
    await backing.drop();
  }
}

describe('forged messages on a running PostgreSQL store', () => {
  it('a timer with a time of -Infinity or abc, and a ready notice with a seq that is not a number: dropped, counted, logged once; delivery goes on', async () => {
    const schema = freshSchema('notice');
    await survives({
      name: 'postgres',
      url: () => storeUrl(schema),
      send: (channel, message) => withClient(async (client) => void (await client.query('SELECT pg_notify($1, $2)', [`delayq:${schema}:${channel}`, message]))),
      drop: () => dropSchema(schema),
    });
  });
});

describe('forged messages on a running Redis store', () => {
  let server: RedisServer | undefined;
  let publisher: Redis | undefined;
  before(async () => {
    server = await startRedis();
    publisher = new Redis({ host: '127.0.0.1', port: server.port });
  });
  after(async () => {
    publisher?.disconnect();
    await server?.stop();
    server?.remove();
  });

  it('a timer with a time of -Infinity or abc, and a ready message with a shard that is not one: dropped, counted, logged once; delivery goes on', async () => {
    await survives({
      name: 'redis',
      url: () => `${server!.url}?prefix=forged`,
      send: async (channel, message, topic) => void (await publisher!.publish(channel === 'timers' ? 'forged:timers' : `forged:ready:${topic}`, message)),
      drop: async () => undefined,
    });
  });
});
