/**
 * The push slots wired in the Pusher (ManualClock, scripted transport): a topic whose
 * receiver never answers keeps its share of `maxInFlight` and no more, the other topics'
 * pushes go at once, and a push that finds no slot is deferred, not failed.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import { PUSH_SLOT_WAIT_MS } from '../../src/engine/push/pusher.js';
import { DelayQueue } from '../../src/open-queue.js';
import { T0, flush } from '../helpers/engine.js';
import { openPushing, type ScriptedTransport } from '../helpers/push.js';

const STUCK = 'https://stuck.example.com/hook';
const FAST = 'https://fast.example.com/hook';
const A = 'https://a.example.com/hook';
const B = 'https://b.example.com/hook';

/** Flushes until `done()` holds (the pushes answer in promise callbacks, a batch per turn). */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 500 && !done(); turn++) await flush(1);
  assert.ok(done(), what);
}

const sentTo = (transport: ScriptedTransport, url: string): number => transport.sent.filter((s) => s.request.url === url).length;

describe('push slots (engine)', () => {
  let q: DelayQueue | undefined;
  afterEach(async () => {
    await q?.close();
    q = undefined;
  });

  it('a topic whose receiver never answers holds its share of the slots; another topic, with many more tasks than the cap, is pushed at once, one attempt each', async () => {
    const opened = await openPushing({}, { maxInFlight: 8 });
    q = opened.q;
    const { transport } = opened;
    transport.holdIf = (request) => request.url === STUCK;
    await q.setPush('stuck', { url: STUCK, concurrency: 100 });
    await q.scheduleMany(Array.from({ length: 50 }, (_, i) => ({ topic: 'stuck', id: `s${i}` })));
    await flush();
    // Alone, a topic may hold ceil(8 / 2) slots: the other half waits for whoever comes next.
    assert.equal(sentTo(transport, STUCK), 4);

    await q.setPush('fast', { url: FAST, concurrency: 100 });
    const ids = Array.from({ length: 100 }, (_, i) => `f${String(i).padStart(3, '0')}`);
    await q.scheduleMany(ids.map((id) => ({ topic: 'fast', id })));
    await until(() => sentTo(transport, FAST) === 100, 'every fast task pushed');
    await flush();

    const fast = transport.sent.filter((s) => s.request.url === FAST);
    assert.deepEqual(
      fast.map((s) => s.request.headers['webhook-id']),
      ids,
    );
    assert.ok(fast.every((s) => s.request.headers['delayq-attempt'] === '1' && s.at === T0));
    for (const id of ids) {
      const task: Awaited<ReturnType<DelayQueue['get']>> = await q.get(id);
      assert.deepEqual([task?.state, task?.attempts], ['completed', 1], id);
    }
    // The stuck topic, above its share (ceil(8 / 3) = 3) while fast pushed, took no more.
    assert.equal(sentTo(transport, STUCK), 4);
    const stats = (await q.stats()).push;
    assert.deepEqual(stats?.topics['fast'], { sent: 100, ok: 100, failed: {}, deferred: 0, noSlot: 0 });
    assert.deepEqual(stats?.origins['https://fast.example.com']?.breaker, { state: 'closed', consecutiveFailures: 0, openUntil: null });
    assert.deepEqual(stats?.topics['stuck'], { sent: 4, ok: 0, failed: {}, deferred: 0, noSlot: 0 });

    // Its receiver answers: the stuck topic goes on, its share at a time.
    while (transport.held.length > 0) {
      transport.release();
      await flush();
    }
    assert.equal(sentTo(transport, STUCK), 50);
  });

  it('a push whose slot was taken between its reserve and its send waits for one, then is deferred: not sent, no attempt spent, no failure of its origin, due again at once', async () => {
    const opened = await openPushing({}, { maxInFlight: 3 });
    q = opened.q;
    const { transport, clock } = opened;
    transport.hold = true;
    await q.setPush('a', { url: A, concurrency: 10 });
    await q.setPush('b', { url: B, concurrency: 10 });
    await flush();
    // Both workers wait for tasks, each with room for 2 (ceil(3 / 2)); 4 fall due at once.
    await q.scheduleMany(['a1', 'a2', 'b1', 'b2'].map((id) => ({ topic: id.slice(0, 1), id })));
    await flush();
    // The first topic took 2 slots; the second finds its share (ceil(3 / 3) = 1) and one free slot.
    assert.equal(transport.sent.length, 3);
    const pushed = new Set(transport.sent.map((s) => s.request.headers['webhook-id']));
    const waiting = ['a1', 'a2', 'b1', 'b2'].find((id) => !pushed.has(id))!;
    const topic = waiting.slice(0, 1);
    const origin = `https://${topic}.example.com`;

    clock.advance(PUSH_SLOT_WAIT_MS - 1);
    await flush();
    assert.equal((await q.get(waiting))?.state, 'reserved');
    clock.advance(1);
    await flush();
    const deferred = await q.get(waiting);
    assert.deepEqual([deferred?.state, deferred?.attempts, deferred?.runAt, deferred?.lastError], ['pending', 0, T0, null]);
    let stats = (await q.stats()).push;
    assert.equal(stats?.topics[topic]?.noSlot, 1);
    assert.deepEqual(stats?.topics[topic]?.failed, {});
    assert.deepEqual(stats?.origins[origin]?.breaker, { state: 'closed', consecutiveFailures: 0, openUntil: null });

    // No slot frees: the task waits in the store, not reserved again and again.
    clock.advance(10_000);
    await flush();
    assert.equal(transport.sent.length, 3);
    assert.equal((await q.stats()).push?.topics[topic]?.noSlot, 1);

    // Slots free: it is pushed, as its first attempt, with its own runAt.
    while (transport.held.length > 0) {
      transport.release();
      await flush();
    }
    const again = transport.sent.filter((s) => s.request.headers['webhook-id'] === waiting);
    assert.equal(again.length, 1);
    assert.equal(again[0]?.request.headers['delayq-attempt'], '1');
    assert.equal(again[0]?.request.headers['delayq-run-at'], String(T0));
    for (const id of ['a1', 'a2', 'b1', 'b2']) assert.deepEqual([(await q.get(id))?.state, (await q.get(id))?.attempts], ['completed', 1], id);
    stats = (await q.stats()).push;
    assert.deepEqual(stats?.origins[origin]?.breaker, { state: 'closed', consecutiveFailures: 0, openUntil: null });
  });

  it('a push waiting for a slot gets the one its own topic frees, in order, and is sent at once', async () => {
    const opened = await openPushing({}, { maxInFlight: 3 });
    q = opened.q;
    const { transport } = opened;
    transport.hold = true;
    await q.setPush('a', { url: A, concurrency: 10 });
    await q.setPush('b', { url: B, concurrency: 10 });
    await flush();
    await q.scheduleMany(['a1', 'a2', 'b1', 'b2'].map((id) => ({ topic: id.slice(0, 1), id })));
    await flush();
    assert.equal(transport.sent.length, 3);
    const pushed = new Set(transport.sent.map((s) => s.request.headers['webhook-id']));
    const waiting = ['a1', 'a2', 'b1', 'b2'].find((id) => !pushed.has(id))!;
    const url = waiting.startsWith('a') ? A : B;
    transport.release(undefined, url);
    await flush();
    assert.equal(transport.sent.length, 4);
    assert.equal(transport.sent[3]?.request.headers['webhook-id'], waiting);
    assert.equal((await q.stats()).push?.topics[waiting.slice(0, 1)]?.noSlot, 0);
    while (transport.held.length > 0) {
      transport.release();
      await flush();
    }
  });

  it('push.maxInFlight is checked when the queue opens', async () => {
    for (const bad of [0, -1, 2.5, 2_000_000])
      await assert.rejects(DelayQueue.open({ push: { maxInFlight: bad } }), (error: unknown) => isDelayQError(error, 'INVALID_OPTION') && error.message.startsWith('push.maxInFlight'), String(bad));
  });
});
