/**
 * Push isolation over real HTTP on loopback: a receiver that never answers, on one topic,
 * beside a healthy receiver on another, with many more tasks than the process's push slots
 * (`maxInFlight`, 256 by default). The healthy topic must not notice: every task delivered
 * once, as its first attempt, while the stuck pushes are still waiting for their answers
 * (their timeout is 60 s, so nothing here depends on how long the run takes), no push of it
 * deferred for lack of a slot, its origin's breaker closed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DelayQueue } from '../../src/open-queue.js';
import { answerWith, startReceiver, type Receiver } from './receiver.js';

const STUCK_TASKS = 600;
const HEALTHY_TASKS = 1_000;

/** Polls (the acks land in the store a little after the answers arrive). */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.fail(what);
}

describe('push isolation over real HTTP', () => {
  let stuck: Receiver;
  let healthy: Receiver;
  let q: DelayQueue;
  before(async () => {
    stuck = await startReceiver('127.0.0.1', () => undefined);
    healthy = await startReceiver('127.0.0.1', answerWith(204));
    // Each receiver allowlisted on its own port only.
    q = await DelayQueue.open({ store: 'memory', push: { allow: [`127.0.0.1:${stuck.port}`, `127.0.0.1:${healthy.port}`] } });
  });
  after(async () => {
    // The stuck pushes fail as their connections close; then the queue settles them and closes.
    await stuck.close();
    await q.close();
    await healthy.close();
  });

  it('a hung receiver holds its topic and its share of the slots; a healthy topic beside it gets all its tasks delivered, first attempt each, its breaker closed', async () => {
    await q.setPush('stuck', { url: stuck.url, concurrency: 1_000, timeoutMs: 60_000 });
    await q.scheduleMany(Array.from({ length: STUCK_TASKS }, (_, i) => ({ topic: 'stuck', id: `stuck-${i}`, payload: i })));
    // Alone, a topic may hold half the slots: 128 of 256.
    await stuck.arrivals(128);

    await q.setPush('healthy', { url: healthy.url, concurrency: 200 });
    const ids = Array.from({ length: HEALTHY_TASKS }, (_, i) => `healthy-${i}`);
    await q.scheduleMany(ids.map((id, i) => ({ topic: 'healthy', id, payload: i })));
    await healthy.arrivals(HEALTHY_TASKS);
    await eventually(async () => {
      for (const id of ids) if ((await q.get(id))?.state !== 'completed') return false;
      return true;
    }, 'every healthy task completed');

    const arrived = healthy.received.map((r) => r.headers['webhook-id']);
    assert.equal(arrived.length, HEALTHY_TASKS);
    assert.deepEqual(new Set(arrived), new Set(ids));
    assert.ok(healthy.received.every((r) => r.headers['delayq-attempt'] === '1'));
    for (const id of ids) assert.equal((await q.get(id))?.attempts, 1, id);

    const stats = (await q.stats()).push;
    assert.deepEqual(stats?.topics['healthy'], { sent: HEALTHY_TASKS, ok: HEALTHY_TASKS, failed: {}, deferred: 0, noSlot: 0 });
    const origin = new URL(healthy.url).origin;
    assert.deepEqual(stats?.origins[origin]?.breaker, { state: 'closed', consecutiveFailures: 0, openUntil: null });
    // All of it while the stuck pushes were still waiting for their answers, and no more of them sent.
    assert.deepEqual(stats?.topics['stuck'], { sent: 128, ok: 0, failed: {}, deferred: 0, noSlot: 0 });
    assert.equal(stuck.received.length, 128);
  });
});
