/** The store suite's cases of "loadDue" (runStoreConformance, ./index.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { T0, task, loadAll, assertEachOnceInOrder } from './fixtures.js';

/** `store` is the store of the case running: a fresh one for each. */
export function loadDueCases(store: TaskStore): void {
  describe('loadDue', () => {
    it('returns pending timers before `until` in (dueAt, insertion) order, paged', async () => {
      const tasks = [
        task('t3', { runAt: T0 + 300 }),
        task('t1', { runAt: T0 + 100 }),
        task('t2a', { runAt: T0 + 200 }),
        task('t2b', { runAt: T0 + 200 }),
        task('t9', { runAt: T0 + 900 }),
      ];
      await store.tasks.schedule(tasks, T0);
      await store.tasks.schedule([task('t2c', { runAt: T0 + 200 })], T0);
      const refs = await loadAll(store, T0 + 900, 2);
      assert.deepEqual(
        refs.map((r) => r.id),
        ['t1', 't2a', 't2b', 't2c', 't3'],
      );
      assert.ok(refs.every((r) => r.kind === 'run' && r.receipt === null));
      assert.deepEqual(await store.tasks.loadDue(T0 + 100, null, 10), []);
    });

    it('includes reservations as ttr timers and excludes finished tasks', async () => {
      await store.tasks.schedule([task('run', { runAt: T0 + 50 }), task('res', { runAt: T0 }), task('done', { runAt: T0 }), task('gone', { runAt: T0 })], T0);
      const claimed = await store.tasks.reserve(['res', 'done'], T0, 1_000);
      const done = claimed.find((r) => r.id === 'done')!;
      assert.equal((await store.tasks.ack('done', done.receipt!, T0 + 1)).status, 'acked');
      await store.tasks.cancel('gone', T0);
      const refs = await loadAll(store, T0 + 60_000);
      assert.deepEqual(
        refs.map((r) => [r.id, r.kind, r.dueAt]),
        [
          ['run', 'run', T0 + 50],
          ['res', 'ttr', T0 + 1_000],
        ],
      );
      const res = claimed.find((r) => r.id === 'res')!;
      assert.equal(refs[1]!.receipt, res.receipt);
    });

    it('pages through many timers without gaps or repeats', async () => {
      const many = Array.from({ length: 2_500 }, (_, i) => task(`m${i}`, { runAt: T0 + (i % 50) }));
      await store.tasks.schedule(many, T0);
      const refs = await loadAll(store, T0 + 1_000, 333);
      assertEachOnceInOrder(refs, 2_500);
    });

    it('loads far-future tasks once their time comes near: in order, cancelled ones never, moved ones at their new time', async () => {
      const HOUR = 3_600_000;
      const DAY = 24 * HOUR;
      await store.tasks.schedule(
        [
          task('f1', { runAt: T0 + 2 * DAY }),
          task('near', { runAt: T0 + 500 }),
          task('f2', { runAt: T0 + 2 * DAY }),
          task('f3', { runAt: T0 + 3 * HOUR }),
          task('cancelled', { runAt: T0 + DAY }),
          task('nearer', { runAt: T0 + 5 * DAY }),
          task('later', { runAt: T0 + 4 * DAY }),
        ],
        T0,
      );
      await store.tasks.schedule([task('f4', { runAt: T0 + 3 * HOUR })], T0 + 1);
      assert.deepEqual(
        (await loadAll(store, T0 + 60_000)).map((r) => r.id),
        ['near'],
      );
      assert.equal((await store.tasks.cancel('cancelled', T0 + 2)).status, 'cancelled');
      assert.equal((await store.tasks.reschedule('nearer', T0 + HOUR, T0 + 2)).status, 'rescheduled');
      assert.equal((await store.tasks.reschedule('later', T0 + 4 * DAY + 1, T0 + 2)).status, 'rescheduled');
      assert.deepEqual(
        (await loadAll(store, T0 + 2 * HOUR)).map((r) => [r.id, r.dueAt]),
        [
          ['near', T0 + 500],
          ['nearer', T0 + HOUR],
        ],
      );
      const refs = await loadAll(store, T0 + 5 * DAY, 3);
      assert.deepEqual(
        refs.map((r) => [r.id, r.dueAt]),
        [
          ['near', T0 + 500],
          ['nearer', T0 + HOUR],
          ['f3', T0 + 3 * HOUR],
          ['f4', T0 + 3 * HOUR],
          ['f1', T0 + 2 * DAY],
          ['f2', T0 + 2 * DAY],
          ['later', T0 + 4 * DAY + 1],
        ],
      );
    });

    it('loads many far-future tasks spread over days exactly once each, in order', async () => {
      const DAY = 24 * 3_600_000;
      const many = Array.from({ length: 1_500 }, (_, i) => task(`far${i}`, { runAt: T0 + DAY + ((i * 7_919) % 1_500) * 173_000 }));
      await store.tasks.schedule(many, T0);
      const refs = await loadAll(store, T0 + 5 * DAY, 400);
      assertEachOnceInOrder(refs, 1_500);
    });

    it('accepts an unbounded window', async () => {
      await store.tasks.schedule([task('far', { runAt: T0 + 10 * 365 * 24 * 3600 * 1000 })], T0);
      const refs = await store.tasks.loadDue(Number.POSITIVE_INFINITY, null, 10);
      assert.deepEqual(
        refs.map((r) => r.id),
        ['far'],
      );
    });
  });
}
