/**
 * The push circuit breaker wired in the Pusher: an origin that keeps failing is paused
 * (its tasks deferred without spending attempts), probed after the cooldown, and resumed;
 * the counters and circuits are in stats().push. ManualClock and a scripted transport.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { DelayQueue } from '../../src/open-queue.js';
import { T0, flush } from '../helpers/engine.js';
import { OK, newSecret, status, openPushing } from '../helpers/push.js';

const HOOK = 'https://a.example.com/hook';
const OTHER = 'https://b.example.com/hook';
const ORIGIN = 'https://a.example.com';

const openBreaking = (): ReturnType<typeof openPushing> => openPushing({ pushSecret: newSecret(), pushBreaker: { failureThreshold: 2, cooldownMs: 10_000, probeWaitMs: 500 } });

describe('push circuit breaker (engine)', () => {
  let q: DelayQueue | undefined;
  afterEach(async () => {
    await q?.close();
    q = undefined;
  });

  it('after failureThreshold failures pauses the origin: its due tasks are deferred to the probe time, their attempts not spent', async () => {
    const opened = await openBreaking();
    q = opened.q;
    const { transport, clock } = opened;
    transport.fallback = status(503, 'down');
    await q.setPush('orders', { url: HOOK });
    await q.schedule({ topic: 'orders', id: 'a', maxAttempts: 10 });
    await q.schedule({ topic: 'orders', id: 'b', maxAttempts: 10 });
    await flush();
    assert.equal(transport.sent.length, 2);
    let stats = await q.stats();
    assert.deepEqual(stats.push?.origins[ORIGIN]?.breaker, { state: 'open', consecutiveFailures: 2, openUntil: T0 + 10_000 });

    // Due while open: not sent, given back uncounted until the circuit lets a probe go.
    await q.schedule({ topic: 'orders', id: 'c', maxAttempts: 1 });
    await flush();
    assert.equal(transport.sent.length, 2);
    const c = await q.get('c');
    assert.deepEqual([c?.state, c?.attempts, c?.runAt], ['pending', 0, T0 + 10_000]);
    // a and b's retries (backoff 900 ms) come due while open: deferred too, attempts still 1.
    clock.advance(900);
    await flush();
    assert.equal(transport.sent.length, 2);
    for (const id of ['a', 'b']) {
      const t: Awaited<ReturnType<DelayQueue['get']>> = await q.get(id);
      assert.deepEqual([t?.state, t?.attempts, t?.runAt, t?.lastError], ['pending', 1, T0 + 10_000, 'HTTP 503: down'], id);
    }
    // Another origin is not held back.
    transport.script.push(OK);
    await q.schedule({ topic: 'mail', id: 'm', url: OTHER });
    await flush();
    assert.equal(transport.sent.at(-1)?.request.url, OTHER);

    // The cooldown ends: one probe goes; the others wait probeWaitMs and go once it succeeded.
    transport.fallback = OK;
    transport.hold = true;
    clock.advanceTo(T0 + 10_000);
    await flush();
    assert.deepEqual(transport.sent.slice(3).map((s) => s.request.url), [HOOK], 'one probe');
    stats = await q.stats();
    assert.equal(stats.push?.origins[ORIGIN]?.breaker.state, 'half-open');
    transport.hold = false;
    transport.release(OK);
    await flush();
    assert.equal(stats.push?.origins[ORIGIN]?.breaker.state, 'half-open');
    clock.advance(500);
    await flush();
    for (const id of ['a', 'b', 'c']) assert.equal((await q.get(id))?.state, 'completed', id);
    const c2 = await q.get('c');
    assert.equal(c2?.attempts, 1, 'c, with maxAttempts 1, was deferred and not killed');
    stats = await q.stats();
    assert.deepEqual(stats.push?.origins[ORIGIN]?.breaker, { state: 'closed', consecutiveFailures: 0, openUntil: null });
    const orders = stats.push?.topics['orders'];
    assert.deepEqual([orders?.sent, orders?.ok, orders?.failed, (orders?.deferred ?? 0) > 0], [5, 3, { http5xx: 2 }, true]);
    assert.deepEqual([stats.push?.topics['mail']?.sent, stats.push?.topics['mail']?.ok], [1, 1]);
    assert.equal(stats.push?.origins['https://b.example.com']?.ok, 1);
  });

  it('a failed probe opens the circuit for another cooldown', async () => {
    const opened = await openBreaking();
    q = opened.q;
    const { transport, clock } = opened;
    transport.fallback = { kind: 'failure', reason: 'ECONNREFUSED: connect ECONNREFUSED' };
    await q.setPush('orders', { url: HOOK });
    await q.schedule({ topic: 'orders', id: 'a', maxAttempts: 10 });
    await q.schedule({ topic: 'orders', id: 'b', maxAttempts: 10 });
    await flush();
    clock.advanceTo(T0 + 10_000);
    await flush();
    assert.equal(transport.sent.length, 3, 'one probe');
    const stats = await q.stats();
    assert.deepEqual(stats.push?.origins[ORIGIN]?.breaker, { state: 'open', consecutiveFailures: 2, openUntil: T0 + 20_000 });
    assert.deepEqual(stats.push?.topics['orders']?.failed, { connection: 3 });
  });

  it('holds back tasks with their own url the same way: deferred on the push lane, never handed to pull consumers', async () => {
    const opened = await openBreaking();
    q = opened.q;
    const { transport, clock } = opened;
    transport.fallback = status(500, 'boom');
    await q.schedule({ topic: 'mail', id: 'u1', url: HOOK, maxAttempts: 10 });
    await q.schedule({ topic: 'mail', id: 'u2', url: HOOK, maxAttempts: 10 });
    await flush();
    await q.schedule({ topic: 'mail', id: 'u3', url: `${HOOK}/other-path`, maxAttempts: 1 });
    await flush();
    assert.equal(transport.sent.length, 2, 'the third push is held back: same origin, other path');
    const u3 = await q.get('u3');
    assert.deepEqual([u3?.state, u3?.attempts, u3?.runAt], ['pending', 0, T0 + 10_000]);
    assert.deepEqual(await q.reserve('mail', { max: 10 }), []);
    transport.fallback = OK;
    clock.advanceTo(T0 + 10_000);
    await flush();
    clock.advance(500);
    await flush();
    for (const id of ['u1', 'u2', 'u3']) assert.equal((await q.get(id))?.state, 'completed', id);
    assert.equal((await q.stats()).push?.topics['mail']?.failed['http5xx'], 2);
  });
});
