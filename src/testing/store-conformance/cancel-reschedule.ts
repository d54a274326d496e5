/** The store suite's cases of "cancel and reschedule" (runStoreConformance, ./index.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { T0, task, loadAll } from './fixtures.js';

/** `store` is the store of the case running: a fresh one for each. */
export function cancelAndRescheduleCases(store: TaskStore): void {
  describe('cancel and reschedule', () => {
    it('cancels a pending task once, answering its topic', async () => {
      await store.tasks.schedule([task('a', { topic: 'mail' })], T0);
      assert.deepEqual(await store.tasks.cancel('a', T0 + 1), { status: 'cancelled', topic: 'mail' });
      assert.equal((await store.tasks.get('a'))?.state, 'cancelled');
      assert.deepEqual(await store.tasks.cancel('a', T0 + 2), { status: 'not_pending' });
      assert.deepEqual(await store.tasks.cancel('missing', T0), { status: 'not_found' });
      assert.deepEqual(await loadAll(store, T0 + 10_000), []);
    });

    it('cancels many ids in one call, each as cancel would alone, each with its own topic', async () => {
      const topicOf = (i: number): string => `t${i % 3}`;
      const many = Array.from({ length: 1_200 }, (_, i) => task(`c${i}`, { runAt: T0 + 1_000 + i, topic: topicOf(i) }));
      await store.tasks.schedule(
        [...many, task('taken', { runAt: T0 }), task('far', { runAt: T0 + 3 * 24 * 3_600_000, topic: 'far-topic' }), task('hooked', { url: 'http://10.0.0.1:8080/hook', topic: 'hooks' })],
        T0,
      );
      await store.tasks.reserve(['taken'], T0, undefined);
      const victims = [...many.filter((_, i) => i % 2 === 0).map((x) => x.id), 'taken', 'missing', 'c0', 'far', 'hooked'];
      const outcomes = await store.tasks.cancelMany(victims, T0 + 1);
      assert.equal(outcomes.length, victims.length);
      assert.deepEqual(
        outcomes.slice(0, 600),
        many.filter((_, i) => i % 2 === 0).map((_, j) => ({ status: 'cancelled', topic: topicOf(2 * j) })),
      );
      assert.deepEqual(
        outcomes.slice(600),
        [{ status: 'not_pending' }, { status: 'not_found' }, { status: 'not_pending' }, { status: 'cancelled', topic: 'far-topic' }, { status: 'cancelled', topic: 'hooks' }],
        'reserved, unknown, repeated, far (parked by a disk store), own push url (its topic, not its lane)',
      );
      const c0 = await store.tasks.get('c0');
      assert.equal(c0?.state, 'cancelled');
      assert.equal(c0?.updatedAt, T0 + 1, 'a cancel stamps updatedAt');
      assert.equal(c0?.payload, many[0]!.payload, 'and keeps the payload');
      assert.equal((await store.tasks.get('c1'))?.state, 'pending');
      assert.equal((await store.tasks.get('taken'))?.state, 'reserved');
      const left = await loadAll(store, T0 + 4 * 24 * 3_600_000);
      assert.deepEqual(
        left.filter((r) => r.kind === 'run').map((r) => r.id),
        many.filter((_, i) => i % 2 === 1).map((x) => x.id),
      );
      const stats = await store.tasks.stats();
      assert.equal(stats.byState.cancelled, 602);
      assert.equal(stats.byState.pending, 600);
      assert.deepEqual(await store.tasks.cancelMany([], T0 + 2), []);
    });

    it('refuses to cancel a reserved task', async () => {
      await store.tasks.schedule([task('a', { runAt: T0 })], T0);
      await store.tasks.reserve(['a'], T0, undefined);
      assert.deepEqual(await store.tasks.cancel('a', T0 + 1), { status: 'not_pending' });
      assert.equal((await store.tasks.get('a'))?.state, 'reserved');
    });

    it('moves a pending task later and earlier', async () => {
      await store.tasks.schedule([task('a')], T0);
      const later = await store.tasks.reschedule('a', T0 + 30_000, T0 + 1);
      assert.equal(later.status, 'rescheduled');
      assert.equal(later.status === 'rescheduled' && later.ref.dueAt, T0 + 30_000);
      assert.equal((await store.tasks.get('a'))?.runAt, T0 + 30_000);
      const earlier = await store.tasks.reschedule('a', T0 + 10, T0 + 2);
      assert.equal(earlier.status === 'rescheduled' && earlier.ref.dueAt, T0 + 10);
      assert.deepEqual(
        (await loadAll(store, T0 + 100_000)).map((r) => [r.id, r.dueAt]),
        [['a', T0 + 10]],
      );
    });

    it('refuses to reschedule what is not pending', async () => {
      assert.equal((await store.tasks.reschedule('missing', T0, T0)).status, 'not_found');
      await store.tasks.schedule([task('a')], T0);
      await store.tasks.cancel('a', T0);
      assert.equal((await store.tasks.reschedule('a', T0 + 5, T0)).status, 'not_pending');
    });
  });
}
