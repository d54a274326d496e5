/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
// A table of bad requests: each must be answered with its status and code, and leave the
// store exactly as it was (GET /v1/stats counts unchanged).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { once } from 'node:events';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { DelayQueue } from '../../src/open-queue.js';
import { buildApp } from '../../src/server/app.js';
import { openTestApp, send, type RequestSpec, type TestApp } from '../helpers/service.js';

const TOKEN = 'tok-123';
const auth = { authorization: `Bearer ${TOKEN}` };
const tooLong = 'x'.repeat(201);

interface Case {
  readonly name: string;
  readonly request: RequestSpec;
  readonly status: number;
  readonly code: string;
  /** Something the message must say (a key's name). */
  readonly says?: string;
}

const json = { 'content-type': 'application/json' };
const deepArrays = (n: number): string => '['.repeat(n) + ']'.repeat(n);
const deepObjects = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

const post = (url: string, body: unknown, headers: Record<string, string> = {}): RequestSpec => ({ method: 'POST', url, body, headers: { ...auth, ...headers } });

const CASES: Case[] = [
  { name: 'malformed JSON', request: post('/v1/tasks', '{"topic": "a",', { 'content-type': 'application/json' }), status: 400, code: 'INVALID_JSON' },
  { name: 'JSON with a trailing comma', request: post('/v1/tasks', '{"topic":"a",}', { 'content-type': 'application/json' }), status: 400, code: 'INVALID_JSON' },
  { name: 'empty JSON body', request: post('/v1/tasks', '', { 'content-type': 'application/json' }), status: 400, code: 'INVALID_JSON' },
  { name: 'body that is an array', request: post('/v1/tasks', [{ topic: 'a' }]), status: 400, code: 'INVALID_ARGUMENT' },
  { name: 'no body at all', request: { method: 'POST', url: '/v1/tasks', headers: { ...auth, ...json } }, status: 400, code: 'INVALID_JSON' },
  // A body-less POST not declared JSON is what a page on another origin can send without a preflight.
  { name: 'a POST without a content-type', request: { method: 'POST', url: '/v1/schedules/s/pause', headers: { ...auth, 'content-type': '' } }, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
  { name: 'text/plain body', request: post('/v1/tasks', 'topic=a', { 'content-type': 'text/plain' }), status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
  { name: 'missing topic', request: post('/v1/tasks', { delayMs: 5 }), status: 400, code: 'INVALID_TOPIC' },
  { name: 'topic of the wrong type', request: post('/v1/tasks', { topic: 42 }), status: 400, code: 'INVALID_TOPIC' },
  { name: 'topic with a space', request: post('/v1/tasks', { topic: 'a b' }), status: 400, code: 'INVALID_TOPIC' },
  { name: 'topic too long', request: post('/v1/tasks', { topic: tooLong }), status: 400, code: 'INVALID_TOPIC' },
  { name: 'id with a slash', request: post('/v1/tasks', { topic: 'a', id: 'a/b' }), status: 400, code: 'INVALID_ID' },
  { name: 'id too long', request: post('/v1/tasks', { topic: 'a', id: 'i'.repeat(257) }), status: 400, code: 'INVALID_ID' },
  { name: 'id "..", which a URL would resolve away', request: post('/v1/tasks', { topic: 'a', id: '..' }), status: 400, code: 'INVALID_ID' },
  { name: 'topic "."', request: post('/v1/tasks', { topic: '.' }), status: 400, code: 'INVALID_TOPIC' },
  { name: 'schedule id ".", escaped in the path', request: { method: 'PUT', url: '/v1/schedules/%2e', body: { topic: 'a', everyMs: 60_000 }, headers: auth }, status: 400, code: 'INVALID_ID' },
  { name: 'unknown field', request: post('/v1/tasks', { topic: 'a', urgency: 1 }), status: 400, code: 'INVALID_ARGUMENT' },
  { name: 'priority above 100', request: post('/v1/tasks', { topic: 'a', priority: 101 }), status: 400, code: 'INVALID_OPTION' },
  { name: 'fractional priority', request: post('/v1/tasks', { topic: 'a', priority: 0.5 }), status: 400, code: 'INVALID_OPTION' },
  { name: 'delayMs as a string', request: post('/v1/tasks', { topic: 'a', delayMs: '30s' }), status: 400, code: 'INVALID_DELAY' },
  { name: 'negative delayMs', request: post('/v1/tasks', { topic: 'a', delayMs: -1 }), status: 400, code: 'INVALID_DELAY' },
  { name: 'fractional delayMs', request: post('/v1/tasks', { topic: 'a', delayMs: 1.5 }), status: 400, code: 'INVALID_DELAY' },
  { name: 'delay beyond 10 years', request: post('/v1/tasks', { topic: 'a', delayMs: 11 * 365 * 86_400_000 }), status: 400, code: 'INVALID_DELAY' },
  { name: 'delayMs and runAt both', request: post('/v1/tasks', { topic: 'a', delayMs: 1, runAt: 1 }), status: 400, code: 'INVALID_DELAY' },
  { name: 'runAt as words', request: post('/v1/tasks', { topic: 'a', runAt: 'tomorrow' }), status: 400, code: 'INVALID_DELAY' },
  { name: 'runAt as a date without time', request: post('/v1/tasks', { topic: 'a', runAt: '2030-01-01' }), status: 400, code: 'INVALID_DELAY' },
  { name: 'runAt with an impossible month', request: post('/v1/tasks', { topic: 'a', runAt: '2030-13-01T00:00:00Z' }), status: 400, code: 'INVALID_DELAY' },
  { name: 'runAt on 30 February', request: post('/v1/tasks', { topic: 'a', runAt: '2030-02-30T00:00:00Z' }), status: 400, code: 'INVALID_DELAY', says: 'runAt' },
  { name: 'runAt at 24:00', request: post('/v1/tasks', { topic: 'a', runAt: '2030-01-01T24:00:00Z' }), status: 400, code: 'INVALID_DELAY' },
  { name: 'runAt beyond the Date range', request: post('/v1/tasks', { topic: 'a', runAt: 1e20 }), status: 400, code: 'INVALID_DELAY' },
  { name: 'PATCH to 29 February of a common year', request: { method: 'PATCH', url: '/v1/tasks/t2', body: { runAt: '2030-02-29T12:00:00Z' }, headers: auth }, status: 400, code: 'INVALID_DELAY' },
  { name: 'retry at minute 60', request: post('/v1/tasks/t2/retry', { runAt: '2030-01-01T10:60:00Z' }), status: 400, code: 'INVALID_DELAY' },
  { name: 'runAt as a boolean', request: post('/v1/tasks', { topic: 'a', runAt: true }), status: 400, code: 'INVALID_DELAY' },
  { name: 'runAt 20 years ahead', request: post('/v1/tasks', { topic: 'a', runAt: '2050-01-01T00:00:00Z' }), status: 400, code: 'INVALID_DELAY' },
  { name: 'ttrMs of zero', request: post('/v1/tasks', { topic: 'a', ttrMs: 0 }), status: 400, code: 'INVALID_OPTION' },
  { name: 'maxAttempts as a string', request: post('/v1/tasks', { topic: 'a', maxAttempts: '3' }), status: 400, code: 'INVALID_OPTION' },
  { name: 'unknown backoff field', request: post('/v1/tasks', { topic: 'a', backoff: { base: 1 } }), status: 400, code: 'INVALID_ARGUMENT' },
  { name: 'payload over 1 MiB', request: post('/v1/tasks', { topic: 'a', payload: 'x'.repeat(1024 * 1024) }), status: 413, code: 'PAYLOAD_TOO_LARGE' },
  { name: 'body over the limit', request: post('/v1/tasks', { topic: 'a', payload: 'x'.repeat(2 * 1024 * 1024) }), status: 413, code: 'BODY_TOO_LARGE' },
  { name: 'payload nested 100,000 deep (arrays)', request: post('/v1/tasks', `{"topic":"a","payload":${deepArrays(100_000)}}`, json), status: 400, code: 'PAYLOAD_TOO_DEEP' },
  { name: 'payload nested 100,000 deep (objects)', request: post('/v1/tasks', `{"topic":"a","payload":${deepObjects(100_000)}}`, json), status: 400, code: 'PAYLOAD_TOO_DEEP' },
  { name: 'payload nested 129 deep', request: post('/v1/tasks', `{"topic":"a","payload":${deepArrays(129)}}`, json), status: 400, code: 'PAYLOAD_TOO_DEEP', says: '128' },
  { name: 'batch with a payload nested 100,000 deep', request: post('/v1/tasks/batch', `{"tasks":[{"topic":"a"},{"topic":"a","payload":${deepArrays(100_000)}}]}`, json), status: 400, code: 'PAYLOAD_TOO_DEEP' },
  { name: 'topic nested 100,000 deep', request: post('/v1/tasks', `{"topic":${deepArrays(100_000)}}`, json), status: 400, code: 'INVALID_TOPIC' },
  { name: 'a __proto__ key in the payload', request: post('/v1/tasks', '{"topic":"a","payload":{"x":{"__proto__":{"admin":true}}}}', json), status: 400, code: 'INVALID_ARGUMENT', says: 'body.payload.x.__proto__' },
  { name: 'a __proto__ key spelled with escapes', request: post('/v1/tasks', '{"topic":"a","payload":{"\\u005f_proto__":{"admin":true}}}', json), status: 400, code: 'INVALID_ARGUMENT', says: '__proto__' },
  { name: 'a constructor.prototype key in the payload', request: post('/v1/tasks', '{"topic":"a","payload":{"constructor":{"prototype":{"admin":true}}}}', json), status: 400, code: 'INVALID_ARGUMENT', says: 'constructor.prototype' },
  { name: 'a __proto__ key at the top of the body', request: post('/v1/tasks', '{"__proto__":{"admin":true},"topic":"a"}', json), status: 400, code: 'INVALID_ARGUMENT', says: 'body.__proto__' },
  { name: 'a __proto__ key in an ack batch', request: post('/v1/tasks/ack', '{"acks":[{"id":"t1","receipt":"r","__proto__":{}}]}', json), status: 400, code: 'INVALID_ARGUMENT', says: '__proto__' },
  { name: 'batch that is not an array', request: post('/v1/tasks/batch', { tasks: { topic: 'a' } }), status: 400, code: 'INVALID_ARGUMENT' },
  { name: 'batch with an unknown field', request: post('/v1/tasks/batch', { tasks: [], atomic: true }), status: 400, code: 'INVALID_ARGUMENT' },
  { name: 'batch over 10,000 tasks', request: post('/v1/tasks/batch', { tasks: Array.from({ length: 10_001 }, () => ({ topic: 'a' })) }), status: 413, code: 'BATCH_TOO_LARGE' },
  { name: 'missing token', request: { method: 'POST', url: '/v1/tasks', body: { topic: 'a' } }, status: 401, code: 'UNAUTHORIZED' },
  { name: 'wrong token', request: { method: 'POST', url: '/v1/tasks', body: { topic: 'a' }, headers: { authorization: 'Bearer tok-124' } }, status: 401, code: 'UNAUTHORIZED' },
  { name: 'token without the Bearer scheme', request: { method: 'GET', url: '/v1/stats', headers: { authorization: TOKEN } }, status: 401, code: 'UNAUTHORIZED' },
  { name: 'huge waitMs', request: post('/v1/topics/a/reserve', { waitMs: 600_000 }), status: 400, code: 'INVALID_OPTION' },
  { name: 'negative waitMs', request: post('/v1/topics/a/reserve', { waitMs: -5 }), status: 400, code: 'INVALID_OPTION' },
  { name: 'reserve max over 1,000', request: post('/v1/topics/a/reserve', { max: 1001 }), status: 400, code: 'INVALID_OPTION' },
  { name: 'reserve max as a string', request: post('/v1/topics/a/reserve', { max: '10' }), status: 400, code: 'INVALID_OPTION' },
  { name: 'reserve with an unknown field', request: post('/v1/topics/a/reserve', { timeout: 5 }), status: 400, code: 'INVALID_ARGUMENT' },
  { name: 'reserve on a bad topic', request: post('/v1/topics/a%20b/reserve', {}), status: 400, code: 'INVALID_TOPIC' },
  { name: 'ack without a receipt', request: post('/v1/tasks/t1/ack', {}), status: 400, code: 'INVALID_ARGUMENT' },
  { name: 'ack with a wrong receipt', request: post('/v1/tasks/t1/ack', { receipt: 'nope' }), status: 409, code: 'STALE_RECEIPT' },
  { name: 'nack of an unknown task', request: post('/v1/tasks/none/nack', { receipt: 'r' }), status: 404, code: 'TASK_NOT_FOUND' },
  { name: 'PATCH with neither delayMs nor runAt', request: { method: 'PATCH', url: '/v1/tasks/t1', body: {}, headers: auth }, status: 400, code: 'INVALID_DELAY' },
  { name: 'PATCH with an unknown field', request: { method: 'PATCH', url: '/v1/tasks/t1', body: { delay: 5 }, headers: auth }, status: 400, code: 'INVALID_ARGUMENT' },
  { name: 'PATCH of an unknown task', request: { method: 'PATCH', url: '/v1/tasks/none', body: { delayMs: 5 }, headers: auth }, status: 404, code: 'TASK_NOT_FOUND' },
  { name: 'DELETE of an unknown task', request: { method: 'DELETE', url: '/v1/tasks/none', headers: auth }, status: 404, code: 'TASK_NOT_FOUND' },
  { name: 'list with a bad limit', request: { method: 'GET', url: '/v1/tasks?limit=-1', headers: auth }, status: 400, code: 'INVALID_OPTION' },
  { name: 'list with an unknown parameter', request: { method: 'GET', url: '/v1/tasks?sort=id', headers: auth }, status: 400, code: 'INVALID_ARGUMENT' },
  { name: 'unknown route', request: { method: 'GET', url: '/v2/tasks', headers: auth }, status: 404, code: 'ROUTE_NOT_FOUND' },
];

describe('bad requests', () => {
  let t: TestApp;
  let baseline: unknown;
  const counts = async (): Promise<unknown> => {
    const stats = await send(t.app, { method: 'GET', url: '/v1/stats', headers: auth });
    return { counts: stats.body.counts, topics: stats.body.topics };
  };

  before(async () => {
    t = await openTestApp({ token: TOKEN });
    await send(t.app, { method: 'POST', url: '/v1/tasks', body: { id: 't1', topic: 'a' }, headers: auth });
    await send(t.app, { method: 'POST', url: '/v1/topics/a/reserve', body: {}, headers: auth });
    await send(t.app, { method: 'POST', url: '/v1/tasks', body: { id: 't2', topic: 'b', delayMs: 60_000 }, headers: auth });
    baseline = await counts();
  });
  after(() => t.close());

  it(`has at least 25 cases (${CASES.length})`, () => assert.ok(CASES.length >= 25));

  for (const c of CASES) {
    it(`${c.name} -> ${c.status} ${c.code}`, async () => {
      const res = await send(t.app, c.request);
      assert.equal(res.status, c.status, JSON.stringify(res.body));
      assert.equal(res.body.error.code, c.code, JSON.stringify(res.body));
      assert.equal(typeof res.body.error.message, 'string');
      assert.ok(res.body.error.message.length > 0);
      const message = res.body.error.message as string;
      if (c.says !== undefined) assert.ok(message.includes(c.says), message);
      assert.deepEqual(await counts(), baseline);
    });
  }
});

describe('a client that hangs up mid-request', () => {
  it('is logged at debug, not as a server error, and the server carries on', async () => {
    const lines: { level: number; msg: string }[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
    const queue = await DelayQueue.open({});
    const app = await buildApp({ queue, logger });
    try {
      const base = await app.listen({ host: '127.0.0.1', port: 0 });
      const socket = connect(Number(new URL(base).port), '127.0.0.1');
      await once(socket, 'connect');
      // Promises 1,000 bytes of body, sends 10, hangs up.
      socket.write('POST /v1/tasks HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"topic":');
      await sleep(100);
      socket.destroy();
      const deadline = Date.now() + 5_000;
      while (!lines.some((l) => l.msg === 'client disconnected mid-request') && Date.now() < deadline) await sleep(10);
      assert.ok(lines.some((l) => l.level === 20 && l.msg === 'client disconnected mid-request'), JSON.stringify(lines));
      assert.deepEqual(lines.filter((l) => l.level >= 40), [], 'nothing at warn or error');
      const fine = await fetch(`${base}/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"topic":"a"}' });
      assert.equal(fine.status, 201);
    } finally {
      await app.close();
      await queue.close();
    }
  });
});

describe('shutting down', () => {
  it('answers 503 SHUTTING_DOWN to requests that arrive while closing, and healthz says closing', async () => {
    const t = await openTestApp();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let draining!: () => void;
    const drained = new Promise<void>((resolve) => (draining = resolve));
    // Runs after the app's own preClose hook (which starts the drain) and holds the close open.
    t.app.addHook('preClose', async () => {
      draining();
      await held;
    });
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const closing = t.app.close();
    await drained;
    // inject() waits behind close(), so this goes over a real connection.
    const late = await fetch(`${base}/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"topic":"a"}' });
    assert.equal(late.status, 503);
    assert.equal(((await late.json()) as any).error.code, 'SHUTTING_DOWN');
    assert.equal(late.headers.get('connection'), 'close');
    const health = await fetch(`${base}/healthz`);
    assert.deepEqual([health.status, await health.json()], [503, { status: 'closing' }]);
    release();
    await closing;
    assert.deepEqual((await t.queue.stats()).counts.pending, 0);
    await t.queue.close();
  });
});
