/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
/**
 * Text a store could not hold, reaching it from outside (issue 45): a push receiver that
 * answers 500 with a NUL in its body, and `POST /v1/tasks/:id/nack {"error":"a\u0000b"}`.
 * On PostgreSQL the settlement failed (NUL in text and jsonb): the task stayed reserved for
 * its whole ttr, the receiver's Retry-After was ignored, and history said `expired`. Now, on
 * every store, the failure is settled at once with the NUL as U+FFFD.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DelayQueue } from '../../src/open-queue.js';
import { buildApp } from '../../src/server/app.js';
import { dropSchema, freshSchema, storeUrl } from '../helpers/postgres.js';
import { startRedis, type RedisServer } from '../helpers/redis-servers.js';
import { answerWith, startReceiver, type Receiver } from './receiver.js';

const dir = mkdtempSync(join(tmpdir(), 'delayq-bodies-'));
let redis: RedisServer | undefined;
let receiver: Receiver;
const schemas: string[] = [];
before(async () => {
  redis = await startRedis();
  receiver = await startReceiver('127.0.0.1', answerWith(500, 'bad\u0000body', { 'retry-after': '30' }));
});
after(async () => {
  await receiver.close();
  await redis?.stop();
  redis?.remove();
  for (const schema of schemas) await dropSchema(schema);
  rmSync(dir, { recursive: true, force: true });
});

const STORES: { name: string; url: () => string }[] = [
  { name: 'memory', url: () => 'memory' },
  { name: 'sqlite', url: () => `sqlite:${join(dir, `${Math.random().toString(36).slice(2)}.db`)}` },
  { name: 'redis', url: () => `${redis!.url}?prefix=b${Math.random().toString(36).slice(2, 8)}` },
  {
    name: 'postgres',
    url: () => {
      const schema = freshSchema('bodies');
      schemas.push(schema);
      return storeUrl(schema);
    },
  },
];

for (const kind of STORES) {
  describe(`text with NUL on ${kind.name}`, () => {
    it("a push receiver's 500 with a NUL in its body: retried after its Retry-After at once, history push:5xx with U+FFFD", async () => {
      const q = await DelayQueue.open({ store: kind.url(), push: { allow: ['127.0.0.1/32'] } });
      try {
        const topic = `hooked-${kind.name}`;
        await q.setPush(topic, { url: receiver.url });
        const arrived = receiver.received.length;
        await q.schedule({ id: 'pushed', topic, payload: 1, ttrMs: 600_000 });
        await receiver.arrivals(arrived + 1);
        const sentAt = Date.now();
        let task = await q.get('pushed');
        for (let i = 0; i < 200 && task?.state !== 'pending'; i++) {
          await sleep(20);
          task = await q.get('pushed');
        }
        assert.equal(task?.state, 'pending', 'settled at once, not held for its ttr (10 min)');
        assert.ok(task.runAt >= sentAt + 25_000, `retried after the receiver's Retry-After (30 s): runAt in ${task.runAt - sentAt} ms`);
        assert.equal(task.history.at(-1)?.outcome, 'push:5xx');
        assert.match(task.lastError ?? '', /bad\uFFFDbody/);
        assert.match(task.history.at(-1)?.error ?? '', /bad\uFFFDbody/);
      } finally {
        await q.close();
      }
    });

    it('POST /v1/tasks/:id/nack {"error":"a\\u0000b"} answers 200 and keeps a\\uFFFDb', async () => {
      const q = await DelayQueue.open({ store: kind.url() });
      const app = await buildApp({ queue: q, logger: false, checkResponses: true });
      try {
        await app.listen({ host: '127.0.0.1', port: 0 });
        const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
        const post = async (path: string, body: unknown): Promise<{ status: number; body: any }> => {
          const response = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
          return { status: response.status, body: await response.json() };
        };
        await q.schedule({ id: 'n1', topic: 'nul', payload: 1 });
        const reserved = await post('/v1/topics/nul/reserve', { max: 1, waitMs: 5_000 });
        const [task] = reserved.body.tasks;
        const nacked = await post('/v1/tasks/n1/nack', { receipt: task.receipt, error: 'a\u0000b', delayMs: 60_000 });
        assert.equal(nacked.status, 200, JSON.stringify(nacked.body));
        assert.equal(nacked.body.state, 'pending');
        const stored: any = await (await fetch(`${base}/v1/tasks/n1`)).json();
        assert.equal(stored.lastError, 'a\uFFFDb');
        assert.deepEqual(stored.history.map((h: { outcome: string; error: string }) => [h.outcome, h.error]), [['nacked', 'a\uFFFDb']]);
      } finally {
        await app.close();
        await q.close();
      }
    });
  });
}
