/** The store suite's cases of "defer" (runStoreConformance, ./index.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { pushLaneOf } from '../../core/task/model.js';
import { T0, task, loadAll } from './fixtures.js';


/** The push lane of the fixtures' topic. */
const ORDERS_PUSH = pushLaneOf('orders');
/** `store` is the store of the case running: a fresh one for each. */
export function deferCases(store: TaskStore): void {
  describe('defer', () => {
    it('gives a reservation back uncounted: pending at runAt, attempts as before, lastError kept, a run timer', async () => {
      await store.tasks.schedule([task('d', { maxAttempts: 1 })], T0);
      const [first] = await store.tasks.reserve(['d'], T0 + 1_000);
      const nacked = await store.tasks.nack({ id: 'd', receipt: first!.receipt!, now: T0 + 1_001, delayMs: 0, error: 'HTTP 503', random: 0 });
      assert.equal(nacked.status, 'dead', 'one attempt: a nack kills it');
      await store.tasks.retryDead('d', T0 + 2_000, T0 + 1_002);
      const [second] = await store.tasks.reserve(['d'], T0 + 2_000);
      assert.equal(second?.attempts, 1);
      const deferred = await store.tasks.defer({ id: 'd', receipt: second.receipt!, runAt: T0 + 30_000, now: T0 + 2_001 });
      assert.equal(deferred.status, 'deferred');
      if (deferred.status === 'deferred') assert.deepEqual([deferred.ref.id, deferred.ref.kind, deferred.ref.dueAt, deferred.ref.topic], ['d', 'run', T0 + 30_000, 'orders']);
      const back = await store.tasks.get('d');
      assert.deepEqual([back?.state, back?.attempts, back?.runAt, back?.receipt, back?.reservedUntil, back?.lastError], ['pending', 0, T0 + 30_000, null, null, 'HTTP 503']);
      assert.deepEqual(await store.tasks.reserve(['d'], T0 + 29_999), [], 'not before its new runAt');
      const [third] = await store.tasks.reserve(['d'], T0 + 30_000);
      assert.equal(third?.attempts, 1, 'the deferred attempt was not counted');
      assert.deepEqual((await loadAll(store, T0 + 100_000)).map((r) => [r.id, r.kind]), [['d', 'ttr']]);
      const stats = await store.tasks.stats();
      assert.deepEqual([stats.byState.reserved, stats.byState.pending], [1, 0]);
    });

    it('to its own runAt, already past (a push that found no slot): pending and due at once, its attempt not counted', async () => {
      await store.tasks.schedule([task('d')], T0);
      const [first] = await store.tasks.reserve(['d'], T0 + 1_000);
      const deferred = await store.tasks.defer({ id: 'd', receipt: first!.receipt!, runAt: T0, now: T0 + 1_001 });
      assert.equal(deferred.status === 'deferred' ? deferred.ref.dueAt : deferred.status, T0);
      const back = await store.tasks.get('d');
      assert.deepEqual([back?.state, back?.attempts, back?.runAt], ['pending', 0, T0]);
      const [again] = await store.tasks.reserve(['d'], T0 + 1_002);
      assert.deepEqual([again?.id, again?.attempts, again?.runAt], ['d', 1, T0]);
    });

    it('is refused with a stale receipt or for an unknown id, and changes nothing', async () => {
      await store.tasks.schedule([task('d')], T0);
      assert.deepEqual(await store.tasks.defer({ id: 'd', receipt: '1.nope', runAt: T0 + 5_000, now: T0 }), { status: 'stale' }, 'pending, not reserved');
      const [r] = await store.tasks.reserve(['d'], T0 + 1_000);
      assert.deepEqual(await store.tasks.defer({ id: 'd', receipt: `${r!.receipt!}x`, runAt: T0 + 5_000, now: T0 + 1_001 }), { status: 'stale' });
      assert.deepEqual(await store.tasks.defer({ id: 'nope', receipt: r!.receipt!, runAt: T0 + 5_000, now: T0 + 1_001 }), { status: 'not_found' });
      const still = await store.tasks.get('d');
      assert.deepEqual([still?.state, still?.attempts], ['reserved', 1]);
      await store.tasks.ack('d', r!.receipt!, T0 + 1_002);
      assert.deepEqual(await store.tasks.defer({ id: 'd', receipt: r!.receipt!, runAt: T0 + 5_000, now: T0 + 1_003 }), { status: 'stale' }, 'completed');
    });

    it('keeps a task with its own url on the push lane', async () => {
      await store.tasks.schedule([task('u', { url: 'https://h.example.com/x' })], T0);
      const [r] = await store.tasks.reserve(['u'], T0 + 1_000);
      const deferred = await store.tasks.defer({ id: 'u', receipt: r!.receipt!, runAt: T0 + 9_000, now: T0 + 1_001 });
      assert.equal(deferred.status === 'deferred' ? deferred.ref.topic : deferred.status, ORDERS_PUSH);
      assert.equal((await store.tasks.get('u'))?.url, 'https://h.example.com/x');
    });
  });
}
