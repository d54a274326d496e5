/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/core/manual-clock.js';
import { openTestApp, send, type TestApp } from '../helpers/service.js';

const START = Date.UTC(2030, 0, 1);

describe('server routes (inject)', () => {
  let t: TestApp;
  let clock: ManualClock;
  before(async () => {
    clock = new ManualClock(START);
    t = await openTestApp({ clock });
  });
  after(() => t.close());

  it('POST /v1/tasks creates (201) and the same id again answers 200 created:false', async () => {
    const first = await send(t.app, { method: 'POST', url: '/v1/tasks', body: { id: 'a1', topic: 'orders', payload: { n: 1 }, delayMs: 1000 } });
    assert.equal(first.status, 201);
    assert.deepEqual(first.body, { id: 'a1', runAt: START + 1000, created: true });
    const again = await send(t.app, { method: 'POST', url: '/v1/tasks', body: { id: 'a1', topic: 'orders', delayMs: 5 } });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, { id: 'a1', runAt: START + 1000, created: false });
  });

  it('POST /v1/tasks generates an id and takes runAt as epoch ms or ISO 8601', async () => {
    const generated = await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'orders' } });
    assert.equal(generated.status, 201);
    assert.match(generated.body.id, /^[A-Za-z0-9._:-]+$/);
    assert.equal(generated.body.runAt, START);
    const iso = await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'orders', runAt: '2030-01-01T00:00:10Z' } });
    assert.equal(iso.body.runAt, START + 10_000);
    const ms = await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'orders', runAt: START + 20_000, ttrMs: 5000, maxAttempts: 2, backoff: { baseMs: 10 } } });
    assert.equal(ms.body.runAt, START + 20_000);
    const task = await send(t.app, { method: 'GET', url: `/v1/tasks/${ms.body.id as string}` });
    assert.equal(task.body.ttrMs, 5000);
    assert.equal(task.body.maxAttempts, 2);
    assert.equal(task.body.backoff.baseMs, 10);
  });

  it('POST /v1/tasks/batch answers per task, storing the good ones', async () => {
    const res = await send(t.app, {
      method: 'POST',
      url: '/v1/tasks/batch',
      body: { tasks: [{ id: 'b1', topic: 'batch' }, { topic: 'bad topic' }, { id: 'b2', topic: 'batch', delayMs: -1 }, { id: 'b3', topic: 'batch', extra: 1 }, { id: 'b4', topic: 'batch', delayMs: 10 }, { id: 'b1', topic: 'batch' }] },
    });
    assert.equal(res.status, 200);
    const results = res.body.results as any[];
    assert.equal(results.length, 6);
    assert.deepEqual(results[0], { id: 'b1', runAt: START, created: true });
    assert.equal(results[1].error.code, 'INVALID_TOPIC');
    assert.equal(results[1].error.details.index, 1);
    assert.equal(results[2].error.code, 'INVALID_DELAY');
    assert.equal(results[3].error.code, 'INVALID_ARGUMENT');
    assert.deepEqual(results[4], { id: 'b4', runAt: START + 10, created: true });
    assert.equal(results[5].created, false);
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/tasks/b2' })).status, 404);
    const empty = await send(t.app, { method: 'POST', url: '/v1/tasks/batch', body: { tasks: [] } });
    assert.deepEqual(empty.body, { results: [] });
  });

  it('POST /v1/tasks/ack acks several deliveries, answering per ack', async () => {
    await send(t.app, { method: 'POST', url: '/v1/tasks/batch', body: { tasks: [{ id: 'q1', topic: 'q' }, { id: 'q2', topic: 'q' }] } });
    const reserved = await send(t.app, { method: 'POST', url: '/v1/topics/q/reserve', body: { max: 10 } });
    const [q1, q2] = reserved.body.tasks as { id: string; receipt: string }[];
    assert.equal(q2?.id, 'q2');
    const bad = await send(t.app, { method: 'POST', url: '/v1/tasks/ack', body: { acks: [{ id: 'q1', receipt: q1!.receipt }, { id: 'q2' }] } });
    assert.equal(bad.status, 400);
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/tasks/q1' })).body.state, 'reserved');
    const res = await send(t.app, {
      method: 'POST',
      url: '/v1/tasks/ack',
      body: { acks: [{ id: 'q1', receipt: q1!.receipt }, { id: 'q2', receipt: `${q2.receipt}x` }, { id: 'nope', receipt: 'r' }] },
    });
    assert.equal(res.status, 200);
    const results = res.body.results as any[];
    assert.deepEqual(results[0], { id: 'q1', acked: true });
    assert.equal(results[1].error.code, 'STALE_RECEIPT');
    assert.equal(results[2].error.code, 'TASK_NOT_FOUND');
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/tasks/q1' })).body.state, 'completed');
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/tasks/q2' })).body.state, 'reserved');
  });

  it('POST /v1/tasks/cancel answers per id, and a bad id cancels nothing', async () => {
    await send(t.app, { method: 'POST', url: '/v1/tasks/batch', body: { tasks: [{ id: 'k1', topic: 'k', delayMs: 50 }, { id: 'k2', topic: 'k', delayMs: 50 }] } });
    const bad = await send(t.app, { method: 'POST', url: '/v1/tasks/cancel', body: { ids: ['k1', 'k 2'] } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'INVALID_ID');
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/tasks/k1' })).body.state, 'pending');
    const res = await send(t.app, { method: 'POST', url: '/v1/tasks/cancel', body: { ids: ['k1', 'nope', 'k1'] } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      results: [
        { id: 'k1', cancelled: true },
        { id: 'nope', cancelled: false },
        { id: 'k1', cancelled: false },
      ],
    });
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/tasks/k1' })).body.state, 'cancelled');
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/tasks/k2' })).body.state, 'pending');
    const unknownField = await send(t.app, { method: 'POST', url: '/v1/tasks/cancel', body: { ids: ['k2'], all: true } });
    assert.equal(unknownField.status, 400);
  });

  it('GET /v1/tasks/:id returns the task, 404 when unknown, 400 for a bad id', async () => {
    const res = await send(t.app, { method: 'GET', url: '/v1/tasks/a1' });
    assert.equal(res.status, 200);
    assert.equal(res.body.id, 'a1');
    assert.equal(res.body.topic, 'orders');
    assert.deepEqual(res.body.payload, { n: 1 });
    assert.equal(res.body.state, 'pending');
    assert.equal(res.body.attempts, 0);
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/tasks/nope' })).body.error.code, 'TASK_NOT_FOUND');
    const bad = await send(t.app, { method: 'GET', url: '/v1/tasks/a%20b' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'INVALID_ID');
  });

  it('GET /v1/tasks lists by topic and state, pages with after/next', async () => {
    const page1 = await send(t.app, { method: 'GET', url: '/v1/tasks?topic=batch&limit=2' });
    assert.equal(page1.status, 200);
    assert.deepEqual(page1.body.tasks.map((x: any) => x.id), ['b1', 'b4']);
    assert.equal(page1.body.next, 'b4');
    const page2 = await send(t.app, { method: 'GET', url: '/v1/tasks?topic=batch&limit=2&after=b4' });
    assert.deepEqual(page2.body, { tasks: [], next: null });
    const pending = await send(t.app, { method: 'GET', url: '/v1/tasks?state=pending&limit=1000' });
    assert.ok(pending.body.tasks.every((x: any) => x.state === 'pending'));
    assert.equal(pending.body.next, null);
    const badState = await send(t.app, { method: 'GET', url: '/v1/tasks?state=sleeping' });
    assert.equal(badState.status, 400);
    assert.equal(badState.body.error.code, 'INVALID_ARGUMENT');
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/tasks?limit=0' })).body.error.code, 'INVALID_OPTION');
  });

  it('PATCH /v1/tasks/:id moves a pending task; 404 unknown; 409 not pending', async () => {
    await send(t.app, { method: 'POST', url: '/v1/tasks', body: { id: 'p1', topic: 'keepalive', delayMs: 30_000 } });
    const moved = await send(t.app, { method: 'PATCH', url: '/v1/tasks/p1', body: { delayMs: 60_000 } });
    assert.equal(moved.status, 200);
    assert.deepEqual(moved.body, { id: 'p1', runAt: clock.now() + 60_000 });
    const iso = await send(t.app, { method: 'PATCH', url: '/v1/tasks/p1', body: { runAt: '2030-01-02T00:00:00.000Z' } });
    assert.deepEqual(iso.body, { id: 'p1', runAt: Date.UTC(2030, 0, 2) });
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/tasks/p1' })).body.runAt, Date.UTC(2030, 0, 2));
    const unknown = await send(t.app, { method: 'PATCH', url: '/v1/tasks/nope', body: { delayMs: 1 } });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'TASK_NOT_FOUND');
    await send(t.app, { method: 'DELETE', url: '/v1/tasks/p1' });
    const cancelled = await send(t.app, { method: 'PATCH', url: '/v1/tasks/p1', body: { delayMs: 1 } });
    assert.equal(cancelled.status, 409);
    assert.equal(cancelled.body.error.code, 'TASK_NOT_PENDING');
    const both = await send(t.app, { method: 'PATCH', url: '/v1/tasks/a1', body: { delayMs: 1, runAt: START } });
    assert.equal(both.body.error.code, 'INVALID_DELAY');
  });

  it('DELETE /v1/tasks/:id cancels; 404 unknown; 409 once delivered', async () => {
    await send(t.app, { method: 'POST', url: '/v1/tasks', body: { id: 'd1', topic: 'del', delayMs: 10_000 } });
    await send(t.app, { method: 'POST', url: '/v1/tasks', body: { id: 'd2', topic: 'del' } });
    const ok = await send(t.app, { method: 'DELETE', url: '/v1/tasks/d1' });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, { cancelled: true });
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/tasks/d1' })).body.state, 'cancelled');
    const reserved = await send(t.app, { method: 'POST', url: '/v1/topics/del/reserve', body: {} });
    assert.equal(reserved.body.tasks[0].id, 'd2');
    const delivered = await send(t.app, { method: 'DELETE', url: '/v1/tasks/d2' });
    assert.equal(delivered.status, 409);
    assert.equal(delivered.body.error.code, 'TASK_NOT_PENDING');
    assert.equal(delivered.body.error.details.state, 'reserved');
    assert.equal((await send(t.app, { method: 'DELETE', url: '/v1/tasks/nope' })).status, 404);
  });

  it('reserve, ack and nack: the consumer round trip, with 409 on stale receipts', async () => {
    await send(t.app, { method: 'POST', url: '/v1/tasks/batch', body: { tasks: [{ id: 'c1', topic: 'work', payload: 'x' }, { id: 'c2', topic: 'work', maxAttempts: 1 }, { id: 'c3', topic: 'work' }] } });
    const none = await send(t.app, { method: 'POST', url: '/v1/topics/idle/reserve' });
    assert.deepEqual(none.body, { tasks: [] });
    const got = await send(t.app, { method: 'POST', url: '/v1/topics/work/reserve', body: { max: 3, ttrMs: 10_000 } });
    assert.equal(got.status, 200);
    const [c1, c2, c3] = got.body.tasks;
    assert.deepEqual(Object.keys(c1).sort(), ['attempt', 'id', 'maxAttempts', 'payload', 'receipt', 'reservedUntil', 'runAt', 'topic']);
    assert.equal(c1.payload, 'x');
    assert.equal(c1.attempt, 1);
    assert.equal(c1.reservedUntil, clock.now() + 10_000);
    const acked = await send(t.app, { method: 'POST', url: '/v1/tasks/c1/ack', body: { receipt: c1.receipt } });
    assert.deepEqual([acked.status, acked.body], [200, { acked: true }]);
    // The same ack sent again (its reply lost): it completed the task, so 200 again.
    const again = await send(t.app, { method: 'POST', url: '/v1/tasks/c1/ack', body: { receipt: c1.receipt } });
    assert.deepEqual([again.status, again.body], [200, { acked: true }]);
    const other = await send(t.app, { method: 'POST', url: '/v1/tasks/c1/ack', body: { receipt: `${c1.receipt}x` } });
    assert.deepEqual([other.status, other.body.error.code], [409, 'STALE_RECEIPT']);
    const dead = await send(t.app, { method: 'POST', url: '/v1/tasks/c2/nack', body: { receipt: c2.receipt, error: 'boom' } });
    assert.deepEqual(dead.body, { state: 'dead' });
    const retry = await send(t.app, { method: 'POST', url: '/v1/tasks/c3/nack', body: { receipt: c3.receipt, delayMs: 500 } });
    assert.deepEqual(retry.body, { state: 'pending', runAt: clock.now() + 500 });
    const stale = await send(t.app, { method: 'POST', url: '/v1/tasks/c3/nack', body: { receipt: c3.receipt } });
    assert.deepEqual([stale.status, stale.body.error.code], [409, 'STALE_RECEIPT']);
    const unknown = await send(t.app, { method: 'POST', url: '/v1/tasks/nope/ack', body: { receipt: 'r' } });
    assert.deepEqual([unknown.status, unknown.body.error.code], [404, 'TASK_NOT_FOUND']);
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/tasks/c2' })).body.lastError, 'boom');
  });

  it('GET /v1/stats, /healthz and /openapi.json', async () => {
    const stats = await send(t.app, { method: 'GET', url: '/v1/stats' });
    assert.equal(stats.status, 200);
    assert.equal(stats.body.store, 'memory');
    assert.deepEqual(Object.keys(stats.body.counts).sort(), ['cancelled', 'completed', 'dead', 'pending', 'reserved']);
    assert.ok(stats.body.lateness.count >= 1);
    assert.ok('timers' in stats.body && 'ready' in stats.body && 'topics' in stats.body);
    assert.deepEqual((await send(t.app, { method: 'GET', url: '/healthz' })).body, { status: 'ok' });
    const spec = await send(t.app, { method: 'GET', url: '/openapi.json' });
    assert.equal(spec.body.openapi, '3.0.3');
    for (const path of ['/v1/tasks', '/v1/tasks/batch', '/v1/tasks/{id}', '/v1/topics/{topic}/reserve', '/v1/tasks/{id}/ack', '/v1/tasks/{id}/nack', '/v1/topics/{topic}/push', '/v1/push', '/v1/stats', '/healthz'])
      assert.ok(path in spec.body.paths, path);
  });

  it('unknown routes are 404 ROUTE_NOT_FOUND', async () => {
    const res = await send(t.app, { method: 'PUT', url: '/v1/tasks/a1', body: {} });
    assert.deepEqual([res.status, res.body.error.code], [404, 'ROUTE_NOT_FOUND']);
  });
});

describe('server auth', () => {
  let t: TestApp;
  before(async () => (t = await openTestApp({ token: 's3cret' })));
  after(() => t.close());

  it('needs the bearer token on /v1 routes, not on /healthz or /openapi.json', async () => {
    const missing = await send(t.app, { method: 'GET', url: '/v1/stats' });
    assert.deepEqual([missing.status, missing.body.error.code], [401, 'UNAUTHORIZED']);
    assert.equal(missing.headers['www-authenticate'], 'Bearer');
    for (const authorization of ['Bearer wrong', 'Basic s3cret', 'Bearer s3cret2', 'Bearer ', 's3cret'])
      assert.equal((await send(t.app, { method: 'GET', url: '/v1/stats', headers: { authorization } })).status, 401, authorization);
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/stats', headers: { authorization: 'Bearer s3cret' } })).status, 200);
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/nothing' })).status, 401);
    assert.equal((await send(t.app, { method: 'GET', url: '/healthz' })).status, 200);
    assert.equal((await send(t.app, { method: 'GET', url: '/openapi.json' })).status, 200);
  });
});

describe('server limits and lifecycle', () => {
  it('answers 413 BATCH_TOO_LARGE above maxBatch and 429 when too many long-polls wait', async () => {
    const t = await openTestApp({ limits: { maxBatch: 2, maxLongPolls: 1 } });
    try {
      const big = await send(t.app, { method: 'POST', url: '/v1/tasks/batch', body: { tasks: [{ topic: 'a' }, { topic: 'a' }, { topic: 'a' }] } });
      assert.deepEqual([big.status, big.body.error.code], [413, 'BATCH_TOO_LARGE']);
      const waiting = send(t.app, { method: 'POST', url: '/v1/topics/q/reserve', body: { waitMs: 5_000 } });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const second = await send(t.app, { method: 'POST', url: '/v1/topics/q/reserve', body: { waitMs: 5_000 } });
      assert.deepEqual([second.status, second.body.error.code], [429, 'TOO_MANY_LONG_POLLS']);
      await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'q' } });
      assert.equal((await waiting).body.tasks.length, 1);
    } finally {
      await t.close();
    }
  });

  it('ends waiting long-polls with [] on close, then answers 503 QUEUE_CLOSED once the queue is closed', async () => {
    const t = await openTestApp();
    const waiting = send(t.app, { method: 'POST', url: '/v1/topics/q/reserve', body: { waitMs: 60_000 } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const started = Date.now();
    await t.app.close();
    const answer = await waiting;
    assert.deepEqual([answer.status, answer.body], [200, { tasks: [] }]);
    assert.ok(Date.now() - started < 1_000);
    await t.queue.close();
  });

  it('answers 503 QUEUE_CLOSED when the queue is closed under a running app', async () => {
    const t = await openTestApp();
    await t.queue.close();
    const res = await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'a' } });
    assert.deepEqual([res.status, res.body.error.code], [503, 'QUEUE_CLOSED']);
    assert.equal((await send(t.app, { method: 'GET', url: '/healthz' })).status, 503);
    await t.app.close();
  });
});
