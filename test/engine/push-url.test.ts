/**
 * Tasks with their own push url (`schedule({url})`): pushed to that url whatever their
 * topic, signed with the topic's subscription secret or the queue's default secret, never
 * handed to pull consumers; refused up front when they could not be pushed.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import { ManualClock } from '../../src/core/manual-clock.js';
import { EngineQueue } from '../../src/engine/engine-queue.js';
import type { DelayQueue } from '../../src/open-queue.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { T0, flush } from '../helpers/engine.js';
import { newSecret, sign, status, openPushing } from '../helpers/push.js';

const URL_A = 'https://a.example.com/hook?x=1,2';
const URL_B = 'https://b.example.com/other';

function rejectsWith(code: string): (error: unknown) => boolean {
  return (error) => isDelayQError(error) && error.code === code;
}

describe('push delivery: a task with its own url', () => {
  let q: DelayQueue | undefined;
  afterEach(async () => {
    await q?.close();
    q = undefined;
  });

  it('is POSTed to its url at its runAt, signed with the default secret, and shows its url', async () => {
    const secret = newSecret();
    const opened = await openPushing({ pushSecret: secret });
    q = opened.q;
    const { id } = await q.schedule({ topic: 'orders', delayMs: 500, payload: { n: 1 }, url: URL_A });
    assert.equal((await q.get(id))?.url, URL_A);
    opened.clock.advance(499);
    await flush();
    assert.equal(opened.transport.sent.length, 0);
    opened.clock.advance(1);
    await flush();
    assert.equal(opened.transport.sent.length, 1);
    const { request, at } = opened.transport.sent[0]!;
    assert.equal(at, T0 + 500);
    assert.equal(request.url, URL_A);
    assert.equal(request.body, '{"n":1}');
    const timestamp = Math.floor((T0 + 500) / 1_000);
    assert.equal(request.headers['webhook-signature'], sign(secret, id, timestamp, request.body));
    assert.equal(request.headers['delayq-topic'], 'orders');
    assert.equal(request.headers['delayq-attempt'], '1');
    const done = await q.get(id);
    assert.deepEqual([done?.state, done?.url], ['completed', URL_A]);
  });

  it('is signed with its topic subscription secret when the topic has one, and goes to its own url, not the subscription one', async () => {
    const opened = await openPushing({ pushSecret: newSecret() });
    q = opened.q;
    const topicSecret = newSecret();
    await q.setPush('orders', { url: URL_B, secret: topicSecret, headers: { 'x-team': 'billing' } });
    const { id } = await q.schedule({ topic: 'orders', url: URL_A });
    await flush();
    assert.equal(opened.transport.sent.length, 1);
    const { request } = opened.transport.sent[0]!;
    assert.equal(request.url, URL_A);
    assert.equal(request.headers['webhook-signature'], sign(topicSecret, id, T0 / 1_000, request.body));
    assert.equal(request.headers['x-team'], undefined);
  });

  it('is never handed to pull consumers of its topic, which still get the others', async () => {
    const opened = await openPushing({ pushSecret: newSecret() });
    q = opened.q;
    opened.transport.hold = true;
    await q.schedule({ topic: 'orders', id: 'pushed', url: URL_A });
    await q.schedule({ topic: 'orders', id: 'pulled' });
    await flush();
    const got = await q.reserve('orders', { max: 10 });
    assert.deepEqual(got.map((d) => d.id), ['pulled']);
    assert.deepEqual(opened.transport.sent.map((s) => s.request.headers['webhook-id']), ['pushed']);
    opened.transport.release();
    await flush();
    assert.equal((await q.get('pushed'))?.state, 'completed');
    assert.deepEqual(await q.reserve('orders', { max: 10 }), []);
  });

  it('fails an attempt like any push: retried with backoff after a 500, dead after maxAttempts', async () => {
    const opened = await openPushing({ pushSecret: newSecret() });
    q = opened.q;
    opened.transport.fallback = status(500, 'down');
    const { id } = await q.schedule({ topic: 'orders', url: URL_A, maxAttempts: 2 });
    await flush();
    const failed = await q.get(id);
    assert.deepEqual([failed?.state, failed?.lastError, failed?.runAt], ['pending', 'HTTP 500: down', T0 + 900]);
    opened.clock.advance(900);
    await flush();
    const dead = await q.get(id);
    assert.deepEqual([dead?.state, dead?.attempts, dead?.url], ['dead', 2, URL_A]);
    assert.equal(opened.transport.sent.length, 2);
  });

  it('is refused when nothing could sign it: no subscription on its topic and no default secret (PUSH_NO_SECRET)', async () => {
    const opened = await openPushing();
    q = opened.q;
    await assert.rejects(q.schedule({ topic: 'orders', url: URL_A }), rejectsWith('PUSH_NO_SECRET'));
    await assert.rejects(q.scheduleMany([{ topic: 'x' }, { topic: 'orders', url: URL_A }]), (error: unknown) => {
      assert.ok(isDelayQError(error));
      assert.equal(error.code, 'PUSH_NO_SECRET');
      assert.equal(error.details?.['index'], 1);
      return true;
    });
    assert.deepEqual(await q.list(), []);
    await q.setPush('orders', { url: URL_B });
    await q.schedule({ topic: 'orders', url: URL_A });
  });

  it('refuses a url the SSRF rules refuse or that is malformed (INVALID_URL), and a queue without push', async () => {
    const opened = await openPushing({ pushSecret: newSecret() });
    q = opened.q;
    await assert.rejects(q.schedule({ topic: 'orders', url: 'http://10.0.0.1/hook' }), /refused destination 10\.0\.0\.1/);
    await assert.rejects(q.schedule({ topic: 'orders', url: 'ftp://a.example.com/' }), rejectsWith('INVALID_URL'));
    await assert.rejects(q.schedule({ topic: 'orders', url: 'https://user:pw@a.example.com/' }), rejectsWith('INVALID_URL'));
    await assert.rejects(q.schedule({ topic: 'orders', url: 42 as unknown as string }), rejectsWith('INVALID_URL'));
    assert.deepEqual(await q.list(), []);
    const bare = EngineQueue.start(new MemoryStore(), { clock: new ManualClock(T0) });
    await assert.rejects(bare.schedule({ topic: 'orders', url: URL_A }), /no push transport/);
    await bare.close();
  });

  it('a recurring schedule with a url: every occurrence is pushed there on its millisecond, signed, never pulled', async () => {
    const secret = newSecret();
    const opened = await openPushing({ pushSecret: secret });
    q = opened.q;
    const pulled: string[] = [];
    q.work('reports', (d) => void pulled.push(d.id));
    const { schedule } = await q.schedules.upsert('hourly', { topic: 'reports', everyMs: 1_000, payload: { n: 7 }, url: URL_A });
    assert.equal(schedule.url, URL_A);
    assert.equal((await q.schedules.get('hourly'))?.url, URL_A);
    for (let i = 0; i < 30; i++) {
      opened.clock.advance(100);
      await flush();
    }
    const sent = opened.transport.sent;
    assert.deepEqual(sent.map((s) => s.at), [T0, T0 + 1_000, T0 + 2_000, T0 + 3_000]);
    for (const { request, at } of sent) {
      assert.equal(request.url, URL_A);
      assert.equal(request.body, '{"n":7}');
      assert.equal(request.headers['delayq-topic'], 'reports');
      assert.equal(request.headers['webhook-signature'], sign(secret, `hourly:${at}`, Math.floor(at / 1_000), request.body));
    }
    assert.equal((await q.get(`hourly:${T0 + 1_000}`))?.url, URL_A);
    assert.deepEqual(pulled, []);
    // The same definition without the url is a change: later occurrences go to the topic's consumers.
    const changed = await q.schedules.upsert('hourly', { topic: 'reports', everyMs: 1_000, payload: { n: 7 } });
    assert.deepEqual([changed.changed, changed.schedule.url], [true, null]);
  });

  it('a recurring schedule with a url is checked at upsert like a task: INVALID_URL, the SSRF rules, PUSH_NO_SECRET; nothing stored', async () => {
    const opened = await openPushing();
    q = opened.q;
    await assert.rejects(q.schedules.upsert('s', { topic: 'orders', everyMs: 1_000, url: URL_A }), rejectsWith('PUSH_NO_SECRET'));
    await assert.rejects(q.schedules.upsert('s', { topic: 'orders', everyMs: 1_000, url: 'http://10.0.0.1/hook' }), /refused destination 10\.0\.0\.1/);
    await assert.rejects(q.schedules.upsert('s', { topic: 'orders', everyMs: 1_000, url: 'ftp://a.example.com/' }), rejectsWith('INVALID_URL'));
    await assert.rejects(q.schedules.upsert('s', { topic: 'orders', everyMs: 1_000, url: 42 as unknown as string }), rejectsWith('INVALID_URL'));
    assert.deepEqual(await q.schedules.list(), []);
    await q.setPush('orders', { url: URL_B });
    assert.equal((await q.schedules.upsert('s', { topic: 'orders', everyMs: 1_000, url: URL_A })).created, true);
    const bare = EngineQueue.start(new MemoryStore(), { clock: new ManualClock(T0) });
    await assert.rejects(bare.schedules.upsert('s', { topic: 'orders', everyMs: 1_000, url: URL_A }), /no push transport/);
    await bare.close();
  });

  it('refuses a malformed default secret when the queue starts', async () => {
    assert.throws(() => EngineQueue.start(new MemoryStore(), { pushSecret: 'whsec_c2hvcnQ=' }), rejectsWith('INVALID_SECRET'));
  });
});
