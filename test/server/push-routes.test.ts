/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-argument --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/core/manual-clock.js';
import { SECRET_ROTATION_GRACE_MS } from '../../src/core/push.js';
import { ScriptedTransport, newSecret, testSigner } from '../helpers/push.js';
import { flush } from '../helpers/engine.js';
import { openTestApp, send, type TestApp } from '../helpers/service.js';

const START = Date.UTC(2030, 0, 1);
const URL_HOOK = 'https://hooks.example.com/in';

describe('push subscription routes (inject)', () => {
  let t: TestApp;
  before(async () => {
    const clock = new ManualClock(START);
    t = await openTestApp({ clock, push: { transport: new ScriptedTransport(clock), signer: testSigner } });
  });
  after(() => t.close());

  it('PUT creates (201) with a generated secret shown once; GET and the list show it masked', async () => {
    const put = await send(t.app, { method: 'PUT', url: '/v1/topics/orders/push', body: { url: URL_HOOK, concurrency: 4, headers: { 'X-Env': 'test' } } });
    assert.equal(put.status, 201);
    const secret = put.body.secret as string;
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(put.body.subscription, {
      topic: 'orders',
      url: URL_HOOK,
      secrets: [{ secret: `${secret.slice(0, 10)}…`, expiresAt: null }],
      timeoutMs: 10_000,
      concurrency: 4,
      headers: { 'x-env': 'test' },
      createdAt: START,
      updatedAt: START,
    });
    const got = await send(t.app, { method: 'GET', url: '/v1/topics/orders/push' });
    assert.equal(got.status, 200);
    assert.equal(got.body.secret, undefined);
    assert.deepEqual(got.body.subscription, put.body.subscription);
    assert.ok(!JSON.stringify(got.body).includes(secret), 'GET never shows the secret');
    const listed = await send(t.app, { method: 'GET', url: '/v1/push' });
    assert.deepEqual(listed.body, { subscriptions: [put.body.subscription], next: null });
  });

  it('PUT again replaces (200): no secret keeps the current one, a new one rotates', async () => {
    const kept = await send(t.app, { method: 'PUT', url: '/v1/topics/rotating/push', body: { url: URL_HOOK } });
    assert.equal(kept.status, 201);
    const replaced = await send(t.app, { method: 'PUT', url: '/v1/topics/rotating/push', body: { url: URL_HOOK, timeoutMs: 500 } });
    assert.equal(replaced.status, 200);
    assert.equal(replaced.body.secret, undefined);
    assert.equal(replaced.body.subscription.timeoutMs, 500);
    assert.deepEqual(replaced.body.subscription.secrets, kept.body.subscription.secrets);
    const given = newSecret();
    const rotated = await send(t.app, { method: 'PUT', url: '/v1/topics/rotating/push', body: { url: URL_HOOK, secret: given } });
    assert.equal(rotated.body.secret, given);
    assert.deepEqual(
      rotated.body.subscription.secrets.map((s: { expiresAt: number | null }) => s.expiresAt),
      [null, START + SECRET_ROTATION_GRACE_MS],
    );
  });

  it('DELETE removes (200), then GET and DELETE answer 404 PUSH_NOT_FOUND', async () => {
    await send(t.app, { method: 'PUT', url: '/v1/topics/gone/push', body: { url: URL_HOOK } });
    const deleted = await send(t.app, { method: 'DELETE', url: '/v1/topics/gone/push' });
    assert.deepEqual([deleted.status, deleted.body], [200, { deleted: true }]);
    for (const method of ['GET', 'DELETE'] as const) {
      const missing = await send(t.app, { method, url: '/v1/topics/gone/push' });
      assert.equal(missing.status, 404, method);
      assert.equal(missing.body.error.code, 'PUSH_NOT_FOUND');
    }
  });

  it('answers 400 with the field for a bad url, secret, timeout, concurrency or header', async () => {
    const cases: [object, string, RegExp][] = [
      [{}, 'INVALID_URL', /url: is required/],
      [{ url: 'ftp://x.example.com/' }, 'INVALID_URL', /must be http or https/],
      [{ url: 'http://10.0.0.1/in' }, 'INVALID_URL', /refused destination 10\.0\.0\.1/],
      [{ url: 42 }, 'INVALID_URL', /url/],
      [{ url: URL_HOOK, secret: 'not-a-secret' }, 'INVALID_SECRET', /secret: must be whsec_/],
      [{ url: URL_HOOK, timeoutMs: 60_001 }, 'INVALID_OPTION', /timeoutMs: must be an integer from 1 to 60000/],
      [{ url: URL_HOOK, concurrency: 0 }, 'INVALID_OPTION', /concurrency/],
      [{ url: URL_HOOK, headers: { 'delayq-topic': 'x' } }, 'INVALID_OPTION', /is set by delayq/],
      [{ url: URL_HOOK, headers: { 'x-n': 5 } }, 'INVALID_OPTION', /headers/],
      [{ url: URL_HOOK, extra: true }, 'INVALID_ARGUMENT', /extra: unknown field/],
    ];
    for (const [body, code, message] of cases) {
      const res = await send(t.app, { method: 'PUT', url: '/v1/topics/bad/push', body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.code, code, JSON.stringify(body));
      assert.match(res.body.error.message, message, JSON.stringify(body));
    }
    const badTopic = await send(t.app, { method: 'PUT', url: '/v1/topics/bad%20topic/push', body: { url: URL_HOOK } });
    assert.equal(badTopic.body.error.code, 'INVALID_TOPIC');
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/topics/bad/push' })).status, 404);
  });

  it('POST /v1/tasks with a url: 400 PUSH_NO_SECRET without a secret to sign with, 201 once the topic has a subscription; GET shows the url', async () => {
    const refused = await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'own', url: URL_HOOK, delayMs: 60_000 } });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'PUSH_NO_SECRET');
    assert.match(refused.body.error.message, /no push subscription.*--push-secret/);
    await send(t.app, { method: 'PUT', url: '/v1/topics/own/push', body: { url: 'https://hooks.example.com/topic' } });
    const created = await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'own', url: URL_HOOK, delayMs: 60_000 } });
    assert.equal(created.status, 201);
    const got = await send(t.app, { method: 'GET', url: `/v1/tasks/${created.body.id as string}` });
    assert.equal(got.body.url, URL_HOOK);
    const plain = await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'own', delayMs: 60_000 } });
    assert.equal((await send(t.app, { method: 'GET', url: `/v1/tasks/${plain.body.id as string}` })).body.url, null);
  });

  it('POST /v1/tasks/batch with urls: each refused url fails its own item with its code', async () => {
    await send(t.app, { method: 'PUT', url: '/v1/topics/own2/push', body: { url: 'https://hooks.example.com/topic' } });
    const res = await send(t.app, {
      method: 'POST',
      url: '/v1/tasks/batch',
      body: { tasks: [{ topic: 'own2', url: URL_HOOK }, { topic: 'own2', url: 'http://10.0.0.1/x' }, { topic: 'own2', url: 'ftp://x.example.com/' }, { topic: 'nosub', url: URL_HOOK }] },
    });
    const codes = (res.body.results as { id?: string; error?: { code: string } }[]).map((r) => r.error?.code ?? 'ok');
    assert.deepEqual(codes, ['ok', 'INVALID_URL', 'INVALID_URL', 'PUSH_NO_SECRET']);
  });

  it('GET /v1/stats carries the push counters per topic and origin, with each circuit', async () => {
    await send(t.app, { method: 'PUT', url: '/v1/topics/counted/push', body: { url: 'https://counted.example.com/in' } });
    await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'counted', payload: 1 } });
    for (let i = 0; i < 20; i++) await flush();
    const stats = await send(t.app, { method: 'GET', url: '/v1/stats' });
    assert.deepEqual(stats.body.push.topics.counted, { sent: 1, ok: 1, failed: {}, deferred: 0, noSlot: 0 });
    assert.deepEqual(stats.body.push.origins['https://counted.example.com'], {
      sent: 1,
      ok: 1,
      failed: {},
      deferred: 0,
      noSlot: 0,
      breaker: { state: 'closed', consecutiveFailures: 0, openUntil: null },
    });
  });
});
