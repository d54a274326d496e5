import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { Delivery } from '../../src/core/task/model.js';
import type { EngineQueue } from '../../src/engine/engine-queue.js';
import { MAX_TIMER_DELAY_MS } from '../../src/core/options.js';
import { T0, flush, openManual } from '../helpers/engine.js';

describe('delivery', () => {
  let q: EngineQueue | undefined;
  afterEach(async () => {
    await q?.close();
    q = undefined;
  });

  it('delivers a task at its runAt and not a millisecond before', async () => {
    const opened = await openManual();
    q = opened.q;
    const seen: { id: string; at: number }[] = [];
    q.work('orders', (d) => void seen.push({ id: d.id, at: opened.clock.now() }));
    const { id, runAt, created } = await q.schedule({ topic: 'orders', delayMs: 1_000, payload: { order: 7 } });
    assert.equal(created, true);
    assert.equal(runAt, T0 + 1_000);
    opened.clock.advance(999);
    await flush();
    assert.deepEqual(seen, []);
    opened.clock.advance(1);
    await flush();
    assert.deepEqual(seen, [{ id, at: T0 + 1_000 }]);
    assert.equal((await q.get(id))?.state, 'completed');
  });

  it('hands the handler the payload, attempt and receipt', async () => {
    const opened = await openManual();
    q = opened.q;
    const deliveries: Delivery[] = [];
    q.work('mail', (d) => void deliveries.push(d));
    await q.schedule({ topic: 'mail', id: 'm1', runAt: T0 + 5, payload: { to: 'a@b.c', n: [1, 2] } });
    opened.clock.advance(5);
    await flush();
    assert.equal(deliveries.length, 1);
    const d = deliveries[0]!;
    assert.deepEqual(d.payload, { to: 'a@b.c', n: [1, 2] });
    assert.equal(d.id, 'm1');
    assert.equal(d.topic, 'mail');
    assert.equal(d.runAt, T0 + 5);
    assert.equal(d.attempt, 1);
    assert.equal(typeof d.receipt, 'string');
  });

  it('is idempotent by id', async () => {
    const opened = await openManual();
    q = opened.q;
    const first = await q.schedule({ topic: 'orders', id: 'order-1', delayMs: 100 });
    const again = await q.schedule({ topic: 'orders', id: 'order-1', delayMs: 5_000 });
    assert.deepEqual(again, { id: 'order-1', runAt: first.runAt, created: false });
    const many = await q.scheduleMany([
      { topic: 'orders', id: 'order-1' },
      { topic: 'orders', id: 'order-2' },
    ]);
    assert.deepEqual(
      many.map((r) => r.created),
      [false, true],
    );
  });

  it('cancels a pending task so it never fires; a delivered task cannot be cancelled', async () => {
    const opened = await openManual();
    q = opened.q;
    const seen: string[] = [];
    q.work('orders', (d) => void seen.push(d.id));
    await q.schedule({ topic: 'orders', id: 'paid', delayMs: 1_000 });
    await q.schedule({ topic: 'orders', id: 'unpaid', delayMs: 1_000 });
    assert.equal(await q.cancel('paid'), true);
    assert.equal(await q.cancel('paid'), false);
    assert.equal(await q.cancel('never-existed'), false);
    opened.clock.advance(1_000);
    await flush();
    assert.deepEqual(seen, ['unpaid']);
    assert.equal(await q.cancel('unpaid'), false);
    assert.equal((await q.get('paid'))?.state, 'cancelled');
  });

  it('cancel and reschedule with { outcome: true } say why a task could not be changed', async () => {
    const opened = await openManual();
    q = opened.q;
    await q.schedule({ topic: 't', id: 'a', delayMs: 100 });
    assert.deepEqual(await q.reschedule('a', { delayMs: 500 }, { outcome: true }), { status: 'rescheduled', runAt: T0 + 500 });
    assert.deepEqual(await q.reschedule('nope', { delayMs: 5 }, { outcome: true }), { status: 'not_found' });
    assert.equal(await q.cancel('nope', { outcome: true }), 'not_found');
    assert.equal(await q.cancel('a', { outcome: true }), 'cancelled');
    assert.equal(await q.cancel('a', { outcome: true }), 'not_pending');
    assert.deepEqual(await q.reschedule('a', { delayMs: 5 }, { outcome: true }), { status: 'not_pending' });
    opened.clock.advance(1_000);
    await flush();
    assert.deepEqual(await q.reserve('t'), [], 'the cancelled task never fires');
  });

  it('cancelTask and rescheduleTask, the deprecated names, answer as the outcome forms do', async () => {
    const opened = await openManual();
    q = opened.q;
    await q.schedule({ topic: 't', id: 'a', delayMs: 100 });
    assert.deepEqual(await q.rescheduleTask('a', { delayMs: 500 }), { status: 'rescheduled', runAt: T0 + 500 });
    assert.deepEqual(await q.rescheduleTask('nope', { delayMs: 5 }), { status: 'not_found' });
    assert.equal(await q.cancelTask('a'), 'cancelled');
    assert.equal(await q.cancelTask('a'), 'not_pending');
    assert.equal(await q.reschedule('a', { delayMs: 5 }), false);
  });

  it('pushes a deadline back on every keepalive and fires only once they stop', async () => {
    const opened = await openManual();
    q = opened.q;
    const offline: { id: string; at: number }[] = [];
    q.work('presence', (d) => void offline.push({ id: d.id, at: opened.clock.now() }));
    await q.schedule({ topic: 'presence', id: 'conn-1', delayMs: 30_000 });
    for (let i = 0; i < 5; i++) {
      opened.clock.advance(20_000);
      await flush();
      assert.equal(await q.reschedule('conn-1', { delayMs: 30_000 }), true);
    }
    assert.deepEqual(offline, []);
    opened.clock.advance(29_999);
    await flush();
    assert.deepEqual(offline, []);
    opened.clock.advance(1);
    await flush();
    assert.deepEqual(offline, [{ id: 'conn-1', at: T0 + 5 * 20_000 + 30_000 }]);
    assert.equal(await q.reschedule('conn-1', { delayMs: 1 }), false);
  });

  it('moves a task earlier as well as later', async () => {
    const opened = await openManual();
    q = opened.q;
    const seen: number[] = [];
    q.work('t', () => void seen.push(opened.clock.now()));
    await q.schedule({ topic: 't', id: 'x', delayMs: 60_000 });
    assert.equal(await q.reschedule('x', { runAt: T0 + 10 }), true);
    opened.clock.advance(10);
    await flush();
    assert.deepEqual(seen, [T0 + 10]);
  });

  it('delivers tasks due at the same time in insertion order, and earlier ones first', async () => {
    const opened = await openManual();
    q = opened.q;
    const seen: string[] = [];
    q.work('t', (d) => void seen.push(d.id), { concurrency: 1 });
    await q.schedule({ topic: 't', id: 'b1', runAt: T0 + 50 });
    await q.schedule({ topic: 't', id: 'c', runAt: T0 + 70 });
    await q.schedule({ topic: 't', id: 'a', runAt: T0 + 10 });
    await q.schedule({ topic: 't', id: 'b2', runAt: T0 + 50 });
    opened.clock.jump(1_000); // the event loop stalled for a second
    opened.clock.advance(0);
    await flush(30);
    assert.deepEqual(seen, ['a', 'b1', 'b2', 'c']);
  });

  it('fires every overdue task after a stall, none early', async () => {
    const opened = await openManual();
    q = opened.q;
    const seen: { id: string; runAt: number; at: number }[] = [];
    q.work('t', (d) => void seen.push({ id: d.id, runAt: d.runAt, at: opened.clock.now() }), { concurrency: 100 });
    const tasks = Array.from({ length: 500 }, (_, i) => ({ topic: 't', id: `k${i}`, runAt: T0 + ((i * 7919) % 5_000) }));
    await q.scheduleMany(tasks);
    opened.clock.advance(2_000);
    await flush();
    opened.clock.jump(10_000);
    opened.clock.advance(0);
    await flush(50);
    assert.equal(seen.length, 500);
    assert.equal(new Set(seen.map((s) => s.id)).size, 500);
    for (const s of seen) assert.ok(s.at >= s.runAt, `${s.id} early`);
  });

  it('waits past the 2^31-1 ms setTimeout limit without firing early', async () => {
    const opened = await openManual();
    q = opened.q;
    const seen: number[] = [];
    q.work('t', () => void seen.push(opened.clock.now()));
    const delay = 40 * 24 * 3600 * 1000; // 40 days > 24.8 days
    assert.ok(delay > MAX_TIMER_DELAY_MS);
    await q.schedule({ topic: 't', delayMs: delay });
    opened.clock.advance(MAX_TIMER_DELAY_MS);
    await flush();
    assert.deepEqual(seen, []);
    opened.clock.advance(delay - MAX_TIMER_DELAY_MS - 1);
    await flush();
    assert.deepEqual(seen, []);
    opened.clock.advance(1);
    await flush();
    assert.deepEqual(seen, [T0 + delay]);
  });

  it('delivers a task scheduled in the past at once', async () => {
    const opened = await openManual();
    q = opened.q;
    const seen: string[] = [];
    q.work('t', (d) => void seen.push(d.id));
    await q.schedule({ topic: 't', id: 'late', runAt: T0 - 60_000 });
    await flush();
    assert.deepEqual(seen, ['late']);
  });

  it('reports counts by state and topic and a lateness summary', async () => {
    const opened = await openManual();
    q = opened.q;
    q.work('a', () => undefined);
    await q.scheduleMany([
      { topic: 'a', delayMs: 10 },
      { topic: 'a', delayMs: 10 },
      { topic: 'b', delayMs: 10_000 },
    ]);
    opened.clock.advance(10);
    await flush();
    const stats = await q.stats();
    assert.equal(stats.store, 'memory');
    assert.deepEqual(stats.counts, { pending: 1, reserved: 0, completed: 2, dead: 0, cancelled: 0 });
    assert.deepEqual(stats.topics['a'], { completed: 2 });
    assert.deepEqual(stats.topics['b'], { pending: 1 });
    assert.equal(stats.lateness.count, 2);
    assert.equal(stats.lateness.max, 0);
    assert.equal(stats.timers, 1);
  });
});
