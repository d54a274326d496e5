/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
/**
 * Property test through HTTP (issue 45): topics, ids, schedule ids and push header names
 * from a generator that favours `__proto__`, `constructor`, `toString`, `hasOwnProperty`,
 * `valueOf`, `__defineGetter__` and friends, on a real server: scheduled, counted by
 * /v1/stats and /metrics, limited, paused, pushed to a receiver, reserved and acked,
 * purged, and as recurring schedules. Each answers like any other name, and the server lives.
 * Before issue 45 `POST /v1/tasks {"topic":"__proto__"}` then `GET /v1/stats` killed it,
 * `GET /v1/topics/constructor/limits` answered 500, and `PUT /v1/topics/__proto__/limits`
 * made the topics `rate`, `burst`, `periodMs` and `concurrency` undeliverable.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { DelayQClient } from '../../src/client/index.js';
import { DelayQueue } from '../../src/open-queue.js';
import { buildApp } from '../../src/server/app.js';
import { startReceiver, type Receiver } from '../push/receiver.js';
import { hostileNames, prototypeIntact } from '../helpers/hostile-names.js';

describe('hostile names through HTTP', () => {
  let queue: DelayQueue;
  let app: FastifyInstance;
  let base: string;
  let receiver: Receiver;

  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());

  /** A fresh server for each run, so that a failed run leaves nothing to the next (or to fast-check's shrinking). */
  async function open(): Promise<void> {
    queue = await DelayQueue.open({ metrics: { registry: new Registry() }, push: { allow: ['127.0.0.1/32'] } });
    app = await buildApp({ queue, logger: false, metrics: queue.metrics, checkResponses: true });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  }
  async function close(): Promise<void> {
    await app.close();
    await queue.close();
  }

  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; text: string }> {
    const response = await fetch(base + path, {
      method,
      headers: method === 'POST' || body !== undefined ? { 'content-type': 'application/json' } : {},
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, text };
  }

  async function ok(method: string, path: string, body?: unknown): Promise<any> {
    const answer = await call(method, path, body);
    assert.ok(answer.status >= 200 && answer.status < 300, `${method} ${path}: ${answer.status} ${answer.text.slice(0, 300)}`);
    return answer.body;
  }

  const t = (topic: string): string => `/v1/topics/${encodeURIComponent(topic)}`;
  const headerName = (name: string): string => name.toLowerCase().replace(/[^a-z0-9-]/g, 'x');

  it('the reproductions: GET /v1/stats after a task of topic __proto__; limits of constructor and of __proto__', async () => {
    await open();
    try {
      assert.equal((await call('POST', '/v1/tasks', { topic: '__proto__', delayMs: 60_000 })).status, 201);
      const stats = await call('GET', '/v1/stats');
      assert.equal(stats.status, 200, stats.text);
      assert.deepEqual(stats.body.topics['__proto__'], { pending: 1 });
      // The client hands the per-name parts over without a prototype: no name reads as Object's member.
      const viaClient = await new DelayQClient({ url: base }).stats();
      assert.deepEqual({ ...viaClient.topics['__proto__'] }, { pending: 1 });
      for (const name of ['constructor', 'toString', '__proto__']) assert.equal(viaClient.ready[name], undefined, `ready of ${name}`);
      assert.equal((await call('GET', '/metrics')).status, 200);
      assert.equal((await call('GET', '/v1/stats')).status, 200, 'and again: the first scrape wrote nothing it trips on');
      const constructorLimits = await call('GET', `${t('constructor')}/limits`);
      assert.deepEqual([constructorLimits.status, constructorLimits.body.error.code], [404, 'LIMITS_NOT_FOUND']);
      // Limits of __proto__ are its own: the topics named after the limits' fields are delivered.
      assert.equal((await call('PUT', `${t('__proto__')}/limits`, { rate: 1 })).status, 200);
      for (const topic of ['rate', 'burst', 'periodMs', 'concurrency', 'constructor', 'toString', 'valueOf', 'hasOwnProperty']) {
        await ok('POST', '/v1/tasks', { id: `${topic}-1`, topic });
        const { tasks } = await ok('POST', `${t(topic)}/reserve`, { max: 1, waitMs: 2_000 });
        assert.deepEqual(tasks.map((task: { id: string }) => task.id), [`${topic}-1`], topic);
        assert.equal((await call('GET', `${t(topic)}/limits`)).status, 404, `${topic} has no limits`);
      }
      assert.ok(prototypeIntact());
    } finally {
      await close();
    }
  });

  it('every route takes such names like any other; the server lives and Object.prototype is untouched', async () => {
    await fc.assert(
      fc.asyncProperty(hostileNames(5), hostileNames(5), fc.nat(), async (topics, ids, seed) => {
        await open();
        try {
          await exercise(topics, ids, seed);
        } finally {
          await close();
        }
      }),
      { numRuns: 40 },
    );
  });

  async function exercise(topics: string[], ids: string[], seed: number): Promise<void> {
    const pushed = topics[seed % topics.length]!;
    const limited = topics[(seed + 1) % topics.length]!;
    const paused = topics[(seed + 2) % topics.length]!;
    const header = headerName(ids[0]!);
    const subscription = await ok('PUT', `${t(pushed)}/push`, { url: receiver.url, headers: { [header]: 'v' } });
    assert.deepEqual({ ...subscription.subscription.headers }, { [header]: 'v' });
    assert.deepEqual((await ok('GET', `${t(pushed)}/push`)).subscription.headers, { [header]: 'v' });

    const arrived = receiver.received.length;
    const byTopic = new Map<string, string[]>();
    for (const [i, id] of ids.entries()) {
      const topic = topics[(i + seed) % topics.length]!;
      assert.equal((await ok('POST', '/v1/tasks', { id, topic, payload: { id, topic }, delayMs: 0 })).created, true);
      byTopic.set(topic, [...(byTopic.get(topic) ?? []), id]);
    }
    await ok('POST', `${t(paused)}/pause`);
    assert.deepEqual((await ok('PUT', `${t(limited)}/limits`, { rate: 1_000 })).limits, { rate: 1_000, periodMs: 1_000, burst: 1_000, concurrency: null });
    for (const topic of topics) {
      const answer = await call('GET', `${t(topic)}/limits`);
      assert.equal(answer.status, topic === limited ? 200 : 404, `GET limits of ${topic}: ${answer.text}`);
    }

    const stats = await ok('GET', '/v1/stats');
    const counted = (topic: string): number => Object.values<number>(stats.topics[topic] ?? {}).reduce((a, b) => a + b, 0);
    for (const [topic, of] of byTopic) assert.equal(counted(topic), of.length, `stats of ${topic}`);
    assert.deepEqual(Object.keys(stats.limits), [limited]);
    assert.ok(stats.paused.includes(paused));
    const metrics = await call('GET', '/metrics');
    assert.equal(metrics.status, 200, metrics.text.slice(0, 300));
    await ok('GET', '/v1/activity');
    await ok('GET', `/v1/timeline?topic=${encodeURIComponent(topics[0]!)}`);

    await ok('POST', `${t(paused)}/resume`);
    // Pull the topics nobody pushes; the pushed one goes to the receiver.
    for (const [topic, of] of byTopic) {
      if (topic === pushed) continue;
      const got: string[] = [];
      for (let tries = 0; got.length < of.length && tries < 20; tries++) {
        const { tasks } = await ok('POST', `${t(topic)}/reserve`, { max: 10, waitMs: 1_000 });
        for (const task of tasks) {
          assert.deepEqual(task.payload, { id: task.id, topic });
          got.push(task.id);
          assert.equal((await ok('POST', `/v1/tasks/${encodeURIComponent(task.id)}/ack`, { receipt: task.receipt })).acked, true);
        }
      }
      assert.deepEqual(got.sort(), [...of].sort(), `deliveries of ${topic}`);
    }
    const pushedIds = byTopic.get(pushed) ?? [];
    await Promise.race([receiver.arrivals(arrived + pushedIds.length), new Promise((resolve) => setTimeout(resolve, 10_000))]);
    assert.equal(receiver.received.length - arrived, pushedIds.length, `pushes of ${pushed}`);
    const bodies = receiver.received.slice(arrived).map((r) => JSON.parse(r.body) as { id: string; topic: string });
    assert.deepEqual(bodies.map((b) => b.id).sort(), [...pushedIds].sort());
    assert.ok(receiver.received.slice(arrived).every((r) => r.headers[header] === 'v'));
    for (const id of ids) {
      for (let tries = 0; tries < 50 && (await ok('GET', `/v1/tasks/${encodeURIComponent(id)}`)).state !== 'completed'; tries++) await new Promise((r) => setTimeout(r, 20));
      assert.equal((await ok('GET', `/v1/tasks/${encodeURIComponent(id)}`)).state, 'completed', `task ${id}`);
    }
    for (const topic of byTopic.keys()) assert.equal((await ok('GET', `/v1/tasks?topic=${encodeURIComponent(topic)}&limit=100`)).tasks.length, byTopic.get(topic)!.length);

    // Recurring schedules named the same.
    for (const id of ids) {
      await ok('PUT', `/v1/schedules/${encodeURIComponent(id)}`, { topic: topics[0], everyMs: 3_600_000 });
      assert.equal((await ok('GET', `/v1/schedules/${encodeURIComponent(id)}`)).schedule.id, id);
      await ok('POST', `/v1/schedules/${encodeURIComponent(id)}/pause`);
      await ok('GET', `/v1/schedules/${encodeURIComponent(id)}/next?n=2`);
    }
    assert.deepEqual((await ok('GET', '/v1/schedules?limit=100')).schedules.map((s: { id: string }) => s.id).sort(), [...ids].sort());

    // Leave nothing behind for the next run: the ids are free again.
    for (const id of ids) await ok('DELETE', `/v1/schedules/${encodeURIComponent(id)}`);
    for (const topic of byTopic.keys()) assert.ok((await ok('DELETE', `${t(topic)}/tasks?state=completed`)).purged >= 0);
    await ok('DELETE', `${t(limited)}/limits`);
    await ok('DELETE', `${t(pushed)}/push`);
    for (const topic of byTopic.keys()) await ok('DELETE', `${t(topic)}/tasks?state=pending`);
    assert.deepEqual((await ok('GET', '/v1/tasks?limit=100')).tasks, []);
    assert.equal((await ok('GET', '/healthz')).status, 'ok');
    assert.ok(prototypeIntact(), 'Object.prototype was written');
  }
});
