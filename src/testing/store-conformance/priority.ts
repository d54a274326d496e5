/**
 * The store suite's cases of task priorities (runStoreConformance, ./index.ts; ADR 0057): a
 * task's priority is kept, shown by get and list (0 when none was given), and kept through
 * reservations and retries. Where the engine's ready queue orders due tasks (a store without
 * shared dispatch), every run ref the store hands out carries its task's priority; a shared
 * store orders them itself (its reserveReady), which the engine's tests of every store
 * prove end to end (test/engine/priority.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { T0, task, loadAll } from './fixtures.js';

/** `store` is the store of the case running: a fresh one for each. */
export function priorityCases(store: TaskStore): void {
  describe('priority', () => {
    it('is kept on the task and listed, 0 when none was given, at both bounds, among tasks without one in a batch', async () => {
      const priorityOf = (i: number): number | undefined => (i % 4 === 0 ? undefined : i % 4 === 1 ? 100 : i % 4 === 2 ? -100 : i - 20);
      const tasks = Array.from({ length: 40 }, (_, i) => {
        const priority = priorityOf(i);
        return task(`p${String(i).padStart(2, '0')}`, priority === undefined ? {} : { priority });
      });
      await store.tasks.schedule(tasks, T0);
      await store.tasks.schedule([task('one', { priority: 9 })], T0);
      for (let i = 0; i < 40; i++) assert.equal((await store.tasks.get(`p${String(i).padStart(2, '0')}`))?.priority ?? 0, priorityOf(i) ?? 0, `p${i}`);
      assert.equal((await store.tasks.get('one'))?.priority, 9);
      const listed = await store.tasks.list({ topic: 'orders', limit: 100 });
      assert.equal(listed.find((r) => r.id === 'p01')?.priority, 100);
      assert.equal(listed.find((r) => r.id === 'p00')?.priority ?? 0, 0);
    });

    it('is kept through reserve and nack; the run refs of a store the engine orders carry it', async () => {
      const outcomes = await store.tasks.schedule([task('hi', { priority: 42 }), task('lo', { priority: -7 }), task('plain')], T0);
      const local = store.coordination === null;
      if (local) assert.deepEqual(outcomes.map((o) => o.ref?.priority ?? 0), [42, -7, 0]);
      const reserved = await store.tasks.reserve(['hi', 'lo'], T0 + 1_000);
      assert.equal(reserved.length, 2);
      const hi = reserved.find((r) => r.id === 'hi')!;
      const nacked = await store.tasks.nack({ id: 'hi', receipt: hi.receipt!, now: T0 + 1_100, delayMs: 500, random: 0.5 });
      assert.equal(nacked.status, 'retrying');
      if (local && nacked.status === 'retrying') assert.equal(nacked.ref.priority, 42, 'the retry ref');
      assert.equal((await store.tasks.get('hi'))?.priority, 42);
      assert.equal((await store.tasks.get('lo'))?.priority, -7);
      if (local) {
        const refs = await loadAll(store, T0 + 10_000);
        const runs = new Map(refs.filter((r) => r.kind === 'run').map((r) => [r.id, r.priority ?? 0]));
        assert.deepEqual([runs.get('hi'), runs.get('plain')], [42, 0], 'loadDue');
      }
    });
  });
}
