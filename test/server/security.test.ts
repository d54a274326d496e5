/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
// The token and the cross-origin rule, tried as an attacker would: every spelling of a
// target that reaches a handler (percent-escapes, absolute form, fragments, dot segments,
// doubled slashes, ...) needs the token, sent on a bare socket so no client tidies it up.
import assert from 'node:assert/strict';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { DelayQueue } from '../../src/open-queue.js';
import { buildApp } from '../../src/server/app.js';
import { isEnvelope, rawRequest, type RawRequest } from '../helpers/raw-http.js';

const TOKEN = 'spelling-token';
const auth = { authorization: `Bearer ${TOKEN}` };
const json = { 'content-type': 'application/json' };

interface Served {
  readonly app: FastifyInstance;
  readonly queue: DelayQueue;
  readonly port: number;
  readonly logs: { level: number; msg: string }[];
  close(): Promise<void>;
}

async function serve(options: { token?: string; metricsPublic?: boolean; allowHosts?: string[]; events?: boolean } = {}): Promise<Served> {
  const logs: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(JSON.parse(line) as { level: number; msg: string }) });
  const { events, ...served } = options;
  const queue = await DelayQueue.open({ metrics: { registry: new Registry() }, ...(events === true ? { events: true } : {}) });
  const app = await buildApp({ queue, logger, metrics: queue.metrics, ...served });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    app,
    queue,
    port: (app.server.address() as AddressInfo).port,
    logs,
    close: async () => {
      await app.close();
      await queue.close();
    },
  };
}

/** Each reaches a handler that the token guards, however the target is spelled. */
const GUARDED: { name: string; request: RawRequest }[] = [
  { name: 'the plain path', request: { method: 'GET', target: '/v1/stats' } },
  { name: 'an escaped letter in the first segment', request: { method: 'GET', target: '/%761/stats' } },
  { name: 'an escaped digit', request: { method: 'GET', target: '/v%31/stats' } },
  { name: 'an upper-case escape', request: { method: 'GET', target: '/%76%31/%53tats'.replace('%53', '%73') } },
  { name: 'every character escaped', request: { method: 'GET', target: '/%76%31/%73%74%61%74%73' } },
  { name: 'an absolute-form target', request: { method: 'GET', target: 'http://x/v1/stats' } },
  { name: 'an absolute-form https target', request: { method: 'GET', target: 'https://127.0.0.1/v1/stats' } },
  { name: 'an absolute-form target with escapes', request: { method: 'GET', target: 'http://x/%761/stats' } },
  { name: 'a query string', request: { method: 'GET', target: '/v1/stats?topicLimit=5' } },
  { name: 'an empty query', request: { method: 'GET', target: '/v1/stats?' } },
  // fastify reads what follows a # as a query: a route without query parameters takes any.
  { name: 'a fragment', request: { method: 'GET', target: '/v1/tasks/t1#frag' } },
  { name: 'HEAD', request: { method: 'HEAD', target: '/v1/stats' } },
  { name: 'metrics', request: { method: 'GET', target: '/metrics' } },
  { name: 'metrics, escaped', request: { method: 'GET', target: '/%6detrics' } },
  { name: 'metrics with an empty fragment', request: { method: 'GET', target: '/metrics#' } },
  { name: 'metrics with a query', request: { method: 'GET', target: '/metrics?name[]=x' } },
  { name: 'metrics in absolute form', request: { method: 'GET', target: 'http://x/metrics' } },
  { name: 'the push subscriptions, escaped', request: { method: 'GET', target: '/%761/push' } },
  { name: 'the push subscriptions in absolute form', request: { method: 'GET', target: 'http://x/v1/push' } },
  { name: 'an escaped id', request: { method: 'GET', target: '/v1/tasks/%74%31' } },
  { name: 'a schedule, escaped', request: { method: 'GET', target: '/%761/schedules/%73%31' } },
  { name: 'the activity feed, escaped', request: { method: 'GET', target: '/v1/%61ctivity' } },
  { name: "a topic's flow limits, escaped", request: { method: 'GET', target: '/v1/topics/%6cimited/%6c%69mits' } },
  { name: "a topic's flow limits in absolute form", request: { method: 'GET', target: 'http://x/v1/topics/limited/limits' } },
];

/** Each would change state; without the token none may. */
const GUARDED_WRITES: { name: string; request: RawRequest }[] = [
  { name: 'schedule a task, escaped', request: { method: 'POST', target: '/%761/tasks', headers: json, body: '{"topic":"x","delayMs":60000}' } },
  { name: 'schedule a task in absolute form', request: { method: 'POST', target: 'http://x/v1/tasks', headers: json, body: '{"topic":"x","delayMs":60000}' } },
  { name: 'subscribe a topic, escaped (it answers with the secret)', request: { method: 'PUT', target: '/%761/topics/x/push', headers: json, body: '{"url":"https://example.com/hook"}' } },
  { name: 'cancel, escaped', request: { method: 'DELETE', target: '/v%31/tasks/t1' } },
  { name: 'pause a schedule, escaped', request: { method: 'POST', target: '/v1/schedules/%73%31/pause', headers: json } },
  { name: 'delete a schedule in absolute form', request: { method: 'DELETE', target: 'http://x/v1/schedules/s1' } },
  { name: 'retry dead tasks of a topic, escaped', request: { method: 'POST', target: '/%761/topics/x/dead/retry', headers: json, body: '{}' } },
  { name: 'pause a topic, escaped', request: { method: 'POST', target: '/v1/topics/x/%70ause', headers: json } },
  { name: 'set flow limits, escaped', request: { method: 'PUT', target: '/v1/topics/x/%6Cimits', headers: json, body: '{"rate":1}' } },
  { name: 'set flow limits in absolute form', request: { method: 'PUT', target: 'http://x/v1/topics/x/limits', headers: json, body: '{"rate":1}' } },
  { name: 'clear flow limits, escaped', request: { method: 'DELETE', target: '/%761/topics/limited/limits' } },
  { name: 'resume a topic in absolute form', request: { method: 'POST', target: 'http://x/v1/topics/x/resume', headers: json } },
  { name: "purge a topic's tasks, escaped", request: { method: 'DELETE', target: '/v1/topics/x/%74asks?state=pending' } },
  { name: "purge a topic's tasks in absolute form", request: { method: 'DELETE', target: 'http://x/v1/topics/x/tasks?state=dead' } },
];

/** Targets that reach no handler, or only a refusal: never a 2xx, never an error logged. */
const NOWHERE: { name: string; request: RawRequest; status: number }[] = [
  { name: 'a dot segment under /ui', request: { method: 'GET', target: '/ui/../v1/stats' }, status: 400 },
  { name: 'an escaped dot segment under /ui', request: { method: 'GET', target: '/ui/%2e%2e/v1/stats' }, status: 400 },
  { name: 'a dot segment under /ui/vendor', request: { method: 'GET', target: '/ui/vendor/preact/../../../package.json' }, status: 400 },
  { name: 'an escaped slash under /ui', request: { method: 'GET', target: '/ui/..%2fv1/stats' }, status: 404 },
  { name: 'a bad escape', request: { method: 'GET', target: '/v1/schedules/%' }, status: 400 },
  { name: 'a bad escape in the first segment', request: { method: 'GET', target: '/%zz1/stats' }, status: 400 },
  { name: 'an over-long id', request: { method: 'GET', target: `/v1/tasks/${'a'.repeat(5_000)}` }, status: 414 },
];

describe('the token guards every spelling that reaches a handler', () => {
  let s: Served;
  before(async () => {
    s = await serve({ token: TOKEN });
    await s.queue.schedule({ id: 't1', topic: 'x', delayMs: 60_000 });
    await s.queue.schedules.upsert('s1', { topic: 'x', everyMs: 60_000 });
    await s.queue.topics.setLimits('limited', { concurrency: 4 });
  });
  after(() => s.close());

  for (const { name, request } of GUARDED)
    it(`${name}: 401 without the token, 2xx with it`, async () => {
      const without = await rawRequest(s.port, request);
      assert.equal(without.status, 401, `${request.method} ${request.target}: ${without.text}`);
      if (request.method !== 'HEAD') assert.ok(isEnvelope(without.text), without.text);
      const withToken = await rawRequest(s.port, { ...request, headers: { ...request.headers, ...auth } });
      assert.ok(withToken.status >= 200 && withToken.status < 300, `${request.method} ${request.target} with the token: ${withToken.status} ${withToken.text.slice(0, 200)}`);
    });

  for (const { name, request } of GUARDED_WRITES)
    it(`${name}: 401 without the token, and nothing changes`, async () => {
      const before = JSON.stringify([await s.queue.stats(), await s.queue.schedules.list(), await s.queue.listPush(), await s.queue.topics.listLimits()]);
      const answer = await rawRequest(s.port, request);
      assert.equal(answer.status, 401, `${request.method} ${request.target}: ${answer.text}`);
      assert.ok(isEnvelope(answer.text), answer.text);
      assert.ok(!answer.text.includes('whsec_'), 'no secret in the answer');
      assert.equal(JSON.stringify([await s.queue.stats(), await s.queue.schedules.list(), await s.queue.listPush(), await s.queue.topics.listLimits()]), before);
    });

  for (const { name, request, status } of NOWHERE)
    it(`${name}: ${status} in the envelope, with or without the token, and no error logged`, async () => {
      for (const headers of [{}, auth]) {
        const answer = await rawRequest(s.port, { ...request, headers });
        assert.equal(answer.status, status, `${request.target}: ${answer.text}`);
        assert.ok(isEnvelope(answer.text), answer.text);
      }
      assert.deepEqual(
        s.logs.filter((line) => line.level >= 40),
        [],
      );
    });

  it('an unknown path needs the token too (its 404 would map the routes)', async () => {
    assert.equal((await rawRequest(s.port, { method: 'GET', target: '/v1/nothing' })).status, 401);
    assert.equal((await rawRequest(s.port, { method: 'GET', target: '//v1/stats' })).status, 401);
    const known = await rawRequest(s.port, { method: 'GET', target: '/v1/nothing', headers: auth });
    assert.equal(known.status, 404);
    assert.ok(isEnvelope(known.text));
  });

  it('health, the OpenAPI document and the dashboard files need no token', async () => {
    for (const target of ['/healthz', '/openapi.json', '/ui/', '/ui/config.json', '/ui/app.js', '/ui/vendor/preact/hooks.mjs'])
      assert.equal((await rawRequest(s.port, { method: 'GET', target })).status, 200, target);
    assert.equal((await rawRequest(s.port, { method: 'GET', target: '/ui' })).status, 301);
  });

  it('a malformed request line or oversized headers get the envelope, not fastify\'s body', async () => {
    const bad = await rawRequest(s.port, { method: 'GET', target: '/v1/stats HTTP/1.1 x' });
    assert.equal(bad.status, 400);
    assert.ok(isEnvelope(bad.text), bad.text);
    const big = await rawRequest(s.port, { method: 'GET', target: '/v1/stats', headers: { 'x-big': 'a'.repeat(20_000) } });
    assert.equal(big.status, 431);
    assert.equal(JSON.parse(big.text).error.code, 'HEADERS_TOO_LARGE');
  });
});

describe('metrics served publicly', () => {
  let s: Served;
  before(async () => (s = await serve({ token: TOKEN, metricsPublic: true })));
  after(() => s.close());

  it('needs no token on /metrics however it is spelled, and still needs it on /v1', async () => {
    for (const target of ['/metrics', '/%6detrics', 'http://x/metrics']) assert.equal((await rawRequest(s.port, { method: 'GET', target })).status, 200, target);
    assert.equal((await rawRequest(s.port, { method: 'GET', target: '/%761/stats' })).status, 401);
  });
});

describe('requests from another origin, on a server without a token', () => {
  let s: Served;
  before(async () => {
    // Behind a proxy named delayq.example (its name given, as --allow-host does: doors.test.ts).
    s = await serve({ allowHosts: ['delayq.example'] });
    await s.queue.schedules.upsert('s1', { topic: 'x', everyMs: 60_000 });
  });
  after(() => s.close());

  const pause = (headers: Record<string, string>): RawRequest => ({ method: 'POST', target: '/v1/schedules/s1/pause', headers });
  const paused = async (): Promise<boolean> => (await s.queue.schedules.get('s1'))?.paused === true;

  const REFUSED: { name: string; headers: Record<string, string>; status: number; code: string }[] = [
    { name: 'a body-less POST without a content-type (fetch no-cors)', headers: {}, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
    { name: 'a text/plain POST (a form or no-cors fetch)', headers: { 'content-type': 'text/plain' }, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
    { name: 'a form POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
    { name: 'another origin', headers: { ...json, origin: 'http://evil.example' }, status: 403, code: 'CROSS_ORIGIN_REFUSED' },
    { name: 'another port of this host', headers: { ...json, origin: 'http://127.0.0.1:1' }, status: 403, code: 'CROSS_ORIGIN_REFUSED' },
    { name: 'an opaque origin', headers: { ...json, origin: 'null' }, status: 403, code: 'CROSS_ORIGIN_REFUSED' },
    { name: 'Sec-Fetch-Site cross-site', headers: { ...json, 'sec-fetch-site': 'cross-site' }, status: 403, code: 'CROSS_ORIGIN_REFUSED' },
    { name: 'Sec-Fetch-Site same-site', headers: { ...json, 'sec-fetch-site': 'same-site' }, status: 403, code: 'CROSS_ORIGIN_REFUSED' },
  ];
  for (const { name, headers, status, code } of REFUSED)
    it(`refuses ${name} (${status} ${code}) and the schedule stays unpaused`, async () => {
      const answer = await rawRequest(s.port, pause(headers));
      assert.deepEqual([answer.status, JSON.parse(answer.text).error.code], [status, code]);
      assert.equal(await paused(), false);
    });

  it('refuses a cross-origin DELETE and PUT too', async () => {
    const evil = { origin: 'http://evil.example' };
    assert.equal((await rawRequest(s.port, { method: 'DELETE', target: '/v1/schedules/s1', headers: evil })).status, 403);
    assert.equal((await rawRequest(s.port, { method: 'PUT', target: '/v1/topics/x/push', headers: { ...evil, ...json }, body: '{"url":"https://example.com/hook"}' })).status, 403);
    assert.notEqual(await s.queue.schedules.get('s1'), null);
    assert.deepEqual(await s.queue.listPush(), []);
  });

  it('takes the same request from its own origin, from a proxy\'s forwarded host, and from a non-browser client', async () => {
    const own = `http://127.0.0.1:${s.port}`;
    for (const headers of [{ ...json, origin: own }, { ...json, 'sec-fetch-site': 'same-origin', origin: own }, { ...json, origin: 'https://delayq.example', 'x-forwarded-host': 'delayq.example' }, json]) {
      const answer = await rawRequest(s.port, pause(headers));
      assert.equal(answer.status, 200, `${JSON.stringify(headers)}: ${answer.text}`);
      assert.equal(await paused(), true);
      await s.queue.schedules.resume('s1');
    }
  });

  it('reads stay open to other origins (the browser keeps their answers from the page: no CORS headers)', async () => {
    const answer = await rawRequest(s.port, { method: 'GET', target: '/v1/stats', headers: { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' } });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['access-control-allow-origin'], undefined);
  });
});

/**
 * The head of an answer that may never end (an event stream): the status line and headers,
 * read until the blank line; then the connection is dropped.
 */
function rawHead(port: number, request: RawRequest): Promise<{ status: number; head: string }> {
  const headers = { host: `127.0.0.1:${port}`, ...request.headers };
  const head = `${request.method} ${request.target} HTTP/1.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    let text = '';
    const timer = setTimeout(() => socket.destroy(new Error(`no head for ${request.target} within 10 s`)), 10_000);
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? NaN), head: text.slice(0, end).toLowerCase() });
    });
  });
}

describe('the event stream needs the token under every spelling', () => {
  let s: Served;
  before(async () => {
    s = await serve({ token: TOKEN, events: true });
  });
  after(() => s.close());

  const SPELLINGS = ['/v1/events', '/v1/%65vents', '/%761/events', '/v%31/%65%76%65%6e%74%73', 'http://x/v1/events', 'https://127.0.0.1/v1/events?topic=x', '/v1/events#', '/v1/events?topic=x&types=scheduled'];
  for (const target of SPELLINGS)
    it(`GET ${target}: 401 in the envelope without the token or with a wrong one, a stream with it`, async () => {
      for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: `Basic ${TOKEN}` }, { authorization: `Bearer ${TOKEN}x` }]) {
        const refused = await rawRequest(s.port, { method: 'GET', target, headers });
        assert.equal(refused.status, 401, `${target} ${JSON.stringify(headers)}: ${refused.text}`);
        assert.ok(isEnvelope(refused.text), refused.text);
      }
      const streamed = await rawHead(s.port, { method: 'GET', target, headers: auth });
      assert.equal(streamed.status, 200, streamed.head);
      assert.match(streamed.head, /content-type: text\/event-stream/);
    });
});
