import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import { ManualClock } from '../../src/core/manual-clock.js';
import { MAX_RETRY_AFTER_MS, SECRET_ROTATION_GRACE_MS } from '../../src/core/push.js';
import { EngineQueue } from '../../src/engine/engine-queue.js';
import type { DelayQueue } from '../../src/open-queue.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { T0, flush } from '../helpers/engine.js';
import { newSecret, sign, status, openPushing } from '../helpers/push.js';

const URL_ORDERS = 'https://hooks.example.com/orders';

function rejectsWith(code: string): (error: unknown) => boolean {
  return (error) => isDelayQError(error) && error.code === code;
}

describe('push delivery', () => {
  let q: DelayQueue | undefined;
  afterEach(async () => {
    await q?.close();
    q = undefined;
  });

  it('POSTs a due task at its runAt, not before, with the body, the signature and the delayq headers', async () => {
    const opened = await openPushing();
    q = opened.q;
    const secret = newSecret();
    await q.setPush('orders', { url: URL_ORDERS, secret, headers: { 'X-Team': 'billing' } });
    const { id } = await q.schedule({ topic: 'orders', delayMs: 1_000, payload: { order: 7, items: ['a'] } });
    opened.clock.advance(999);
    await flush();
    assert.equal(opened.transport.sent.length, 0);
    opened.clock.advance(1);
    await flush();
    assert.equal(opened.transport.sent.length, 1);
    const { request, at } = opened.transport.sent[0]!;
    assert.equal(at, T0 + 1_000);
    assert.equal(request.url, URL_ORDERS);
    assert.equal(request.body, '{"order":7,"items":["a"]}');
    assert.equal(request.timeoutMs, 10_000);
    const timestamp = (T0 + 1_000) / 1_000;
    assert.deepEqual(request.headers, {
      'x-team': 'billing',
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': sign(secret, id, timestamp, request.body),
      'delayq-topic': 'orders',
      'delayq-attempt': '1',
      'delayq-run-at': String(T0 + 1_000),
    });
    assert.equal((await q.get(id))?.state, 'completed');
  });

  it('retries a 500 with the task backoff, with the same webhook-id and the next attempt number', async () => {
    const opened = await openPushing();
    q = opened.q;
    opened.transport.script.push(status(500, 'database down'));
    await q.setPush('orders', { url: URL_ORDERS });
    const { id } = await q.schedule({ topic: 'orders', payload: null });
    await flush();
    const failed = await q.get(id);
    assert.equal(failed?.state, 'pending');
    assert.equal(failed?.lastError, 'HTTP 500: database down');
    // Backoff 1 s with 20 % jitter at random 0.5: 900 ms.
    assert.equal(failed?.runAt, T0 + 900);
    opened.clock.advance(899);
    await flush();
    assert.equal(opened.transport.sent.length, 1);
    opened.clock.advance(1);
    await flush();
    assert.equal(opened.transport.sent.length, 2);
    const retry = opened.transport.sent[1]!.request.headers;
    assert.equal(retry['webhook-id'], id);
    assert.equal(retry['delayq-attempt'], '2');
    assert.equal(retry['webhook-timestamp'], String(Math.floor((T0 + 900) / 1_000)));
    assert.equal((await q.get(id))?.state, 'completed');
  });

  it('waits out a Retry-After instead of the backoff, capped at MAX_RETRY_AFTER_MS', async () => {
    const opened = await openPushing();
    q = opened.q;
    opened.transport.script.push(status(503, '', 30_000), status(429, 'slow down', 10 * 3_600_000));
    await q.setPush('orders', { url: URL_ORDERS });
    const first = await q.schedule({ topic: 'orders', id: 'a' });
    await flush();
    assert.equal((await q.get(first.id))?.runAt, T0 + 30_000);
    const second = await q.schedule({ topic: 'orders', id: 'b' });
    await flush();
    const capped = await q.get(second.id);
    assert.equal(capped?.runAt, T0 + MAX_RETRY_AFTER_MS);
    assert.equal(capped?.lastError, 'HTTP 429: slow down');
  });

  it('kills a task after maxAttempts failed pushes, keeping the last answer in lastError', async () => {
    const opened = await openPushing();
    q = opened.q;
    opened.transport.fallback = status(500, 'boom');
    await q.setPush('orders', { url: URL_ORDERS });
    const { id } = await q.schedule({ topic: 'orders', maxAttempts: 2 });
    await flush();
    opened.clock.advance(900);
    await flush();
    const dead = await q.get(id);
    assert.equal(opened.transport.sent.length, 2);
    assert.equal(dead?.state, 'dead');
    assert.equal(dead?.lastError, 'HTTP 500: boom');
  });

  it('keeps each push attempt in the task history with its status class: push:5xx, push:429, push:timeout, then acked', async () => {
    const opened = await openPushing();
    q = opened.q;
    opened.transport.script.push(status(503, 'down'), status(429, 'slow down'), { kind: 'failure', reason: 'timeout after 10000 ms' });
    await q.setPush('orders', { url: URL_ORDERS });
    const { id } = await q.schedule({ topic: 'orders', maxAttempts: 5, backoff: { baseMs: 1_000, factor: 1, maxMs: 1_000, jitter: 0 } });
    await flush();
    for (let i = 0; i < 3; i++) {
      opened.clock.advance(1_000);
      await flush();
    }
    const done = await q.get(id);
    assert.equal(done?.state, 'completed');
    assert.deepEqual(
      done?.history.map((a) => [a.attempt, a.startedAt, a.outcome, a.error]),
      [
        [1, T0, 'push:5xx', 'HTTP 503: down'],
        [2, T0 + 1_000, 'push:429', 'HTTP 429: slow down'],
        [3, T0 + 2_000, 'push:timeout', 'timeout after 10000 ms'],
        [4, T0 + 3_000, 'acked', null],
      ],
    );
  });

  it('fails an attempt with the transport failure reason', async () => {
    const opened = await openPushing();
    q = opened.q;
    opened.transport.script.push({ kind: 'failure', reason: 'timeout after 10000 ms' });
    await q.setPush('orders', { url: URL_ORDERS });
    const { id } = await q.schedule({ topic: 'orders' });
    await flush();
    assert.equal((await q.get(id))?.lastError, 'timeout after 10000 ms');
  });

  it('stops a push whose reservation is lost: the signal its request was sent with aborts (RESERVATION_LOST)', async () => {
    const opened = await openPushing();
    q = opened.q;
    opened.transport.hold = true;
    await q.setPush('orders', { url: URL_ORDERS, timeoutMs: 3_000 });
    await q.schedule({ id: 'p1', topic: 'orders' });
    await flush();
    assert.equal(opened.transport.sent.length, 1);
    const signal = opened.transport.signals[0];
    assert.ok(signal !== undefined && !signal.aborted);
    // Its reservation is settled elsewhere meanwhile (a consumer holding its receipt nacks it).
    const receipt = (await q.store.tasks.get('p1'))!.receipt!;
    await q.nack('p1', receipt, { delayMs: 600_000 });
    for (let i = 0; i < 100 && !signal.aborted; i++) {
      opened.clock.advance(100);
      await flush(3);
    }
    assert.ok(signal.aborted && isDelayQError(signal.reason, 'RESERVATION_LOST'), String(signal.reason));
    assert.ok(opened.clock.now() - T0 < 3_000 + 5_000, 'told at its first renewal, before the reservation would run out');
    opened.transport.release({ kind: 'failure', reason: 'aborted' });
    await flush();
  });

  it('keeps at most `concurrency` pushes of a topic in flight', async () => {
    const opened = await openPushing();
    q = opened.q;
    opened.transport.hold = true;
    await q.setPush('orders', { url: URL_ORDERS, concurrency: 2 });
    await q.scheduleMany([1, 2, 3, 4, 5].map((n) => ({ topic: 'orders', id: `t${n}` })));
    await flush();
    assert.equal(opened.transport.sent.length, 2);
    opened.transport.release();
    await flush();
    assert.equal(opened.transport.sent.length, 3);
    while (opened.transport.held.length > 0) {
      opened.transport.release();
      await flush();
    }
    assert.deepEqual(
      opened.transport.sent.map((s) => s.request.headers['webhook-id']),
      ['t1', 't2', 't3', 't4', 't5'],
    );
  });

  it('gives pull consumers of a pushed topic nothing: reserve answers [] after its wait, work handlers are not called', async () => {
    const opened = await openPushing();
    q = opened.q;
    opened.transport.hold = true;
    const handled: string[] = [];
    q.work('orders', (d) => void handled.push(d.id));
    await flush();
    await q.setPush('orders', { url: URL_ORDERS });
    const poll = q.reserve('orders', { waitMs: 5_000 });
    await q.schedule({ topic: 'orders', id: 'o1' });
    await flush();
    assert.equal(opened.transport.sent.length, 1);
    opened.clock.advance(5_000);
    assert.deepEqual(await poll, []);
    assert.deepEqual(await q.reserve('orders'), []);
    assert.deepEqual(handled, []);
    // Other topics are pulled as before.
    await q.schedule({ topic: 'mail', id: 'm1' });
    assert.deepEqual(
      (await q.reserve('mail')).map((d) => d.id),
      ['m1'],
    );
    opened.transport.release();
  });

  it('hands the topic back to pull consumers once its subscription is deleted, waiting ones included', async () => {
    const opened = await openPushing();
    q = opened.q;
    await q.setPush('orders', { url: URL_ORDERS });
    const poll = q.reserve('orders', { waitMs: 60_000 });
    await flush();
    assert.equal(await q.deletePush('orders'), true);
    assert.equal(await q.deletePush('orders'), false);
    assert.equal(await q.getPush('orders'), null);
    await q.schedule({ topic: 'orders', id: 'o1' });
    await flush();
    assert.deepEqual(
      (await poll).map((d) => d.id),
      ['o1'],
    );
    assert.equal(opened.transport.sent.length, 0);
  });

  it('answers the secret only when given or generated, and masks it everywhere else', async () => {
    const opened = await openPushing();
    q = opened.q;
    const created = await q.setPush('orders', { url: URL_ORDERS });
    assert.equal(created.created, true);
    assert.match(created.secret ?? '', /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(created.subscription.secrets[0]?.secret, `${created.secret!.slice(0, 10)}…`);
    const replaced = await q.setPush('orders', { url: URL_ORDERS, timeoutMs: 2_000 });
    assert.equal(replaced.created, false);
    assert.equal(replaced.secret, undefined);
    assert.equal(replaced.subscription.secrets.length, 1, 'no secret given: the current one stays, no rotation');
    const got = await q.getPush('orders');
    assert.equal(got?.timeoutMs, 2_000);
    assert.equal(got?.secrets[0]?.secret, created.subscription.secrets[0]?.secret);
    assert.deepEqual(
      (await q.listPush()).map((s) => s.topic),
      ['orders'],
    );
  });

  it('signs with the old secret too for the rotation grace period, then with the new one only', async () => {
    const opened = await openPushing();
    q = opened.q;
    const [oldSecret, newSecret_] = [newSecret(), newSecret()];
    await q.setPush('orders', { url: URL_ORDERS, secret: oldSecret });
    opened.clock.advance(1_000);
    const rotated = await q.setPush('orders', { url: URL_ORDERS, secret: newSecret_ });
    assert.equal(rotated.secret, newSecret_);
    assert.deepEqual(
      rotated.subscription.secrets.map((s) => s.expiresAt),
      [null, T0 + 1_000 + SECRET_ROTATION_GRACE_MS],
    );
    const { id } = await q.schedule({ topic: 'orders', id: 'early' });
    await flush();
    const early = opened.transport.sent[0]!.request;
    const ts = Number(early.headers['webhook-timestamp']);
    assert.equal(early.headers['webhook-signature'], `${sign(newSecret_, id, ts, early.body)} ${sign(oldSecret, id, ts, early.body)}`);
    await q.schedule({ topic: 'orders', id: 'late', runAt: T0 + 1_000 + SECRET_ROTATION_GRACE_MS });
    opened.clock.advanceTo(T0 + 1_000 + SECRET_ROTATION_GRACE_MS);
    await flush();
    const late = opened.transport.sent[1]!.request;
    assert.equal(late.headers['webhook-signature'], sign(newSecret_, 'late', Number(late.headers['webhook-timestamp']), late.body));
    // A third secret drops the expired one.
    const third = await q.setPush('orders', { url: URL_ORDERS, secret: newSecret() });
    assert.equal(third.subscription.secrets.length, 2);
  });

  it('picks up a subscription set through another process at the next sync', async () => {
    const store = new MemoryStore();
    const opened = await openPushing({ store, pushSyncMs: 500 });
    q = opened.q;
    await q.schedule({ topic: 'orders', id: 'o1', delayMs: 10_000 });
    await store.push.putPushSubscription({
      topic: 'orders',
      url: URL_ORDERS,
      secrets: [{ secret: newSecret(), expiresAt: null }],
      timeoutMs: 1_000,
      concurrency: 1,
      headers: {},
      createdAt: T0,
      updatedAt: T0,
    });
    opened.clock.advance(500);
    await flush();
    opened.clock.advance(9_500);
    await flush();
    assert.deepEqual(
      opened.transport.sent.map((s) => s.request.headers['webhook-id']),
      ['o1'],
    );
  });

  it('lets a push in flight finish on close, then closes the transport', async () => {
    const opened = await openPushing();
    opened.transport.hold = true;
    await opened.q.setPush('orders', { url: URL_ORDERS });
    await opened.q.schedule({ topic: 'orders', id: 'o1' });
    await flush();
    assert.equal(opened.transport.sent.length, 1);
    let closed = false;
    const closing = opened.q.close().then(() => (closed = true));
    await flush();
    assert.equal(closed, false);
    assert.equal(opened.transport.closed, false);
    opened.transport.release();
    await closing;
    assert.equal(opened.transport.closed, true);
  });

  it('reserves a push for timeoutMs plus the margin, so a push cut short is redelivered after it', async () => {
    const opened = await openPushing();
    q = opened.q;
    opened.transport.hold = true;
    await q.setPush('orders', { url: URL_ORDERS, timeoutMs: 2_000 });
    const { id } = await q.schedule({ topic: 'orders' });
    await flush();
    const task = await q.get(id);
    assert.equal(task?.state, 'reserved');
    assert.equal(task?.reservedUntil, T0 + 7_000);
    opened.transport.release();
  });

  it('refuses bad subscriptions with their codes', async () => {
    const opened = await openPushing();
    q = opened.q;
    await assert.rejects(q.setPush('orders', { url: 'ftp://x.example/' }), rejectsWith('INVALID_URL'));
    await assert.rejects(q.setPush('orders', { url: 'not a url' }), rejectsWith('INVALID_URL'));
    await assert.rejects(q.setPush('orders', { url: 'http://10.0.0.1/hook' }), /refused destination 10\.0\.0\.1/);
    await assert.rejects(q.setPush('orders', { url: URL_ORDERS, secret: 'whsec_c2hvcnQ=' }), rejectsWith('INVALID_SECRET'));
    await assert.rejects(q.setPush('orders', { url: URL_ORDERS, timeoutMs: 0 }), rejectsWith('INVALID_OPTION'));
    await assert.rejects(q.setPush('orders', { url: URL_ORDERS, timeoutMs: 60_001 }), rejectsWith('INVALID_OPTION'));
    await assert.rejects(q.setPush('orders', { url: URL_ORDERS, concurrency: 1_001 }), rejectsWith('INVALID_OPTION'));
    await assert.rejects(q.setPush('orders', { url: URL_ORDERS, headers: { 'Webhook-Id': 'x' } }), /headers\.Webhook-Id: is set by delayq/);
    await assert.rejects(q.setPush('orders', { url: URL_ORDERS, headers: { 'x-a': 'line\r\nbreak' } }), rejectsWith('INVALID_OPTION'));
    await assert.rejects(q.setPush('bad topic', { url: URL_ORDERS }), rejectsWith('INVALID_TOPIC'));
    assert.deepEqual(await q.listPush(), []);
  });

  it('refuses setPush on a queue with no push ports', async () => {
    const bare = EngineQueue.start(new MemoryStore(), { clock: new ManualClock(T0) });
    await assert.rejects(bare.setPush('orders', { url: URL_ORDERS }), /no push transport/);
    assert.deepEqual(await bare.listPush(), []);
    await bare.close();
  });
});
