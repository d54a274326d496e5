// An HTTP fuzzer against a real server: fast-check generates requests (methods, targets
// spelled every way, topic and id segments named like Object.prototype members, Host values,
// headers, bodies), each with and without the token, sent on a bare socket. Whatever comes,
// the server never answers 5xx, every refusal is our envelope, no guarded route answers 2xx
// without the token, and nothing changes state without it. The same requests reach a server
// without a token too: there a Host that is not loopback plays the part of a missing token.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { DelayQueue } from '../../src/open-queue.js';
import { buildApp } from '../../src/server/app.js';
import type { FastifyInstance } from 'fastify';
import { isEnvelope, rawRequest, type RawRequest } from '../helpers/raw-http.js';
import { HOSTILE_NAMES } from '../helpers/hostile-names.js';

const TOKEN = 'fuzz-token';

const ROUTES = [
  '/v1/tasks',
  '/v1/tasks/batch',
  '/v1/tasks/cancel',
  '/v1/tasks/ack',
  '/v1/tasks/:id',
  '/v1/tasks/:id/ack',
  '/v1/tasks/:id/nack',
  '/v1/tasks/:id/extend',
  '/v1/tasks/:id/retry',
  '/v1/topics/:topic/reserve',
  '/v1/topics/:topic/push',
  '/v1/topics/:topic/dead/retry',
  '/v1/topics/:topic/dead/cancel',
  '/v1/topics/:topic/pause',
  '/v1/topics/:topic/resume',
  '/v1/topics/:topic/tasks',
  '/v1/topics/:topic/limits',
  '/v1/push',
  '/v1/schedules',
  '/v1/schedules/:id',
  '/v1/schedules/:id/pause',
  '/v1/schedules/:id/resume',
  '/v1/schedules/:id/next',
  '/v1/schedules/preview',
  '/v1/stats',
  '/v1/activity',
  '/v1/timeline',
  // Events are off on this queue: the route answers 400 with the token, 401 without (security.test.ts streams it).
  '/v1/events',
  '/metrics',
  '/healthz',
  '/readyz',
  '/openapi.json',
  '/docs/',
  '/docs/assets/swagger-ui.css',
  '/ui/',
  '/ui/app.js',
  '/ui/config.json',
  '/',
];

/** A segment: an existing name, a valid one, a long one, or junk, sometimes percent-encoded. */
const segment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...HOSTILE_NAMES),
  fc.constantFrom('t1', 't2', 's1', 'work', 'hooked', '.', '..', '%', '%2e%2e', '%2F', '%00', '%zz', '', 'a'.repeat(300), '\u00e9', '%C3%A9', ';x', 'a%20b'),
  fc.stringMatching(/^[A-Za-z0-9._:-]{1,40}$/),
  fc.string({ unit: 'grapheme', maxLength: 12 }).map(encodeURIComponent),
  fc.string({ unit: fc.constantFrom(...'abc%./;:@!$&\'()*+,=~-_'), maxLength: 12 }),
);

/** Percent-encodes some characters of a static path, or changes its case, as an attacker would. */
const respell = (path: string): fc.Arbitrary<string> =>
  fc.array(fc.constantFrom('keep', 'escape', 'upper'), { minLength: path.length, maxLength: path.length }).map((moves) =>
    [...path]
      .map((char, i) => {
        if (char === '/' || char === ':') return char;
        const move = moves[i];
        if (move === 'escape') return `%${char.charCodeAt(0).toString(16).padStart(2, '0')}`;
        return move === 'upper' && i % 5 === 0 ? char.toUpperCase() : char;
      })
      .join(''),
  );

const target: fc.Arbitrary<string> = fc
  .record({
    route: fc.constantFrom(...ROUTES),
    params: fc.array(segment, { minLength: 2, maxLength: 2 }),
    respelled: fc.boolean(),
    prefix: fc.constantFrom('', '', '', 'http://x', 'https://127.0.0.1:1', '/', '/ui/..', '/./'),
    suffix: fc.constantFrom('', '', '', '/', '//', '#', '#frag', '?', '?limit=5', '?topic=work&state=pending', '?n=3', '?after=%', '?x=%zz', '/..', '?limit=99999999999'),
  })
  .chain(({ route, params, respelled, prefix, suffix }) => {
    let i = 0;
    const path = route.replace(/:(id|topic)/g, () => params[i++] ?? 'x');
    return (respelled ? respell(path) : fc.constant(path)).map((spelled) => `${prefix}${spelled}${suffix}`);
  });

const body: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('{}', '[]', '', 'null', '{"topic":"work"}', '{"topic":"work","delayMs":0}', '{"receipt":"r"}', '{"ids":["t1"]}', '{"url":"http://127.0.0.1:9/h"}', '{"topic":"w","everyMs":60000}', '{"rate":5,"concurrency":2}', '{"__proto__":{"x":1}}', '{"topic":'),
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 60 }),
);

const headerValue = (values: readonly (string | undefined)[]): fc.Arbitrary<string | undefined> => fc.constantFrom(...values);

/** Host values: the default (127.0.0.1:port), other loopback spellings, and what a rebound or broken request sends. */
const HOSTS: readonly { readonly value: string | null | undefined; readonly loopback: boolean }[] = [
  { value: undefined, loopback: true },
  { value: undefined, loopback: true },
  { value: 'localhost', loopback: true },
  { value: 'LOCALHOST:7420', loopback: true },
  { value: '[::1]:1', loopback: true },
  { value: '127.0.0.1', loopback: true },
  { value: 'rebind.attacker.example:7420', loopback: false },
  { value: 'localhost.attacker.example', loopback: false },
  { value: '127.0.0.1.nip.io', loopback: false },
  { value: '127.0.0.1:1@attacker.example', loopback: false },
  { value: '10.0.0.1', loopback: false },
  { value: '', loopback: false },
  { value: 'a b', loopback: false },
  { value: 'x'.repeat(300), loopback: false },
  { value: null, loopback: false },
];

const request: fc.Arbitrary<RawRequest & { authorized: boolean; loopback: boolean }> = fc
  .record({
    method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'GET', 'POST'),
    target,
    body,
    authorization: headerValue([undefined, 'right', `Bearer wrong`, 'Bearer', `Basic ${TOKEN}`, `bearer ${TOKEN}x`, `Bearer ${TOKEN} ${TOKEN}`]),
    contentType: headerValue([undefined, 'application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', '']),
    origin: headerValue([undefined, undefined, 'http://evil.example', 'null', 'http://127.0.0.1']),
    fetchSite: headerValue([undefined, undefined, 'cross-site', 'same-site', 'same-origin', 'none']),
    host: fc.constantFrom(...HOSTS),
  })
  .map(({ method, target, body, authorization, contentType, origin, fetchSite, host }) => {
    const headers: Record<string, string> = {};
    if (typeof host.value === 'string') headers['host'] = host.value;
    if (authorization !== undefined) headers['authorization'] = authorization === 'right' ? `Bearer ${TOKEN}` : authorization;
    if (contentType !== undefined) headers['content-type'] = contentType;
    if (origin !== undefined) headers['origin'] = origin;
    if (fetchSite !== undefined) headers['sec-fetch-site'] = fetchSite;
    return { method, target, headers, ...(body !== undefined ? { body } : {}), ...(host.value === null ? { noHost: true } : {}), authorized: authorization === 'right', loopback: host.loopback };
  });

interface Seen {
  readonly route: string | undefined;
  readonly access: string;
  readonly status: number;
}

describe('HTTP fuzzing a real server', () => {
  let queue: DelayQueue;
  let app: FastifyInstance;
  let port: number;
  let open: FastifyInstance;
  let openPort: number;
  const seen = new Map<string, Seen>();

  before(async () => {
    queue = await DelayQueue.open({ metrics: { registry: new Registry() }, push: { allow: ['127.0.0.1/32'] } });
    app = await buildApp({ queue, token: TOKEN, logger: false, metrics: queue.metrics });
    // The same queue behind a server without a token.
    open = await buildApp({ queue, logger: false, metrics: queue.metrics });
    for (const served of [app, open]) {
      // What the server itself decided: the route matched, its access rule, the status sent.
      served.addHook('onResponse', (request, reply, done) => {
        const id = request.headers['x-fuzz-id'];
        if (typeof id === 'string') seen.set(id, { route: request.routeOptions.url, access: request.routeOptions.config.access ?? 'token', status: reply.statusCode });
        done();
      });
    }
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
    await open.listen({ host: '127.0.0.1', port: 0 });
    openPort = (open.server.address() as AddressInfo).port;
    await queue.schedule({ id: 't1', topic: 'work', delayMs: 3_600_000 });
    await queue.schedule({ id: 't2', topic: 'work' });
    await queue.schedules.upsert('s1', { topic: 'work', everyMs: 3_600_000 });
    await queue.setPush('hooked', { url: 'http://127.0.0.1:9/hook' });
    await queue.topics.setLimits('work', { rate: 100 });
  });
  after(async () => {
    await app.close();
    await open.close();
    await queue.close();
  });

  /** Everything a request could change, as text. */
  const state = async (): Promise<string> =>
    JSON.stringify([
      (await queue.stats()).counts,
      (await queue.list({ limit: 1_000 })).map((task) => [task.id, task.state, task.runAt, task.attempts]),
      (await queue.schedules.list()).map((schedule) => [schedule.id, schedule.paused]),
      (await queue.listPush()).map((subscription) => [subscription.topic, subscription.url, subscription.updatedAt]),
      queue.topics.paused(),
      await queue.topics.listLimits(),
    ]);

  it('never a 5xx, always the envelope, no guarded 2xx and no change of state without the token', async () => {
    let counter = 0;
    await fc.assert(
      fc.asyncProperty(request, async ({ authorized, loopback: _loopback, ...spec }) => {
        const id = String(counter++);
        const before = authorized ? '' : await state();
        const answer = await rawRequest(port, { ...spec, headers: { ...spec.headers, 'x-fuzz-id': id } });
        const where = `${spec.method} ${spec.target} ${JSON.stringify(spec.headers)} ${spec.body ?? ''} -> ${answer.status} ${answer.text.slice(0, 200)}`;
        assert.ok(answer.status < 500, where);
        if (answer.status >= 400 && spec.method !== 'HEAD') assert.ok(isEnvelope(answer.text), where);
        const decided = seen.get(id);
        if (!authorized) {
          assert.equal(await state(), before, `state changed without the token: ${where}`);
          if (answer.status < 400) assert.equal(decided?.access, 'public', `a guarded route answered without the token: ${where} (route ${decided?.route})`);
        }
      }),
      { numRuns: 600 },
    );
  });

  it('without a token: the same, with a Host that is not loopback in place of a missing token', async () => {
    let counter = 0;
    await fc.assert(
      fc.asyncProperty(request, async ({ authorized: _authorized, loopback, ...spec }) => {
        const id = `open-${counter++}`;
        const before = loopback ? '' : await state();
        const answer = await rawRequest(openPort, { ...spec, headers: { ...spec.headers, 'x-fuzz-id': id } });
        const where = `${spec.method} ${spec.target} ${JSON.stringify(spec.headers)} ${spec.body ?? ''} -> ${answer.status} ${answer.text.slice(0, 200)}`;
        assert.ok(answer.status < 500, where);
        if (answer.status >= 400 && spec.method !== 'HEAD') assert.ok(isEnvelope(answer.text), where);
        if (!loopback) {
          assert.equal(await state(), before, `state changed from a Host that is not loopback: ${where}`);
          const decided = seen.get(id);
          if (answer.status < 400) assert.equal(decided?.access, 'public', `a guarded route answered a Host that is not loopback: ${where} (route ${decided?.route})`);
        }
      }),
      { numRuns: 400 },
    );
  });
});
