/** The store suite's cases of "reserve" (runStoreConformance, ./index.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { T0, task } from './fixtures.js';

/** `store` is the store of the case running: a fresh one for each. */
export function reserveCases(store: TaskStore): void {
  describe('reserve', () => {
    it('reserves due pending tasks with a receipt, never one before its runAt', async () => {
      await store.tasks.schedule([task('due', { runAt: T0 + 100 }), task('later', { runAt: T0 + 101 })], T0);
      assert.deepEqual(await store.tasks.reserve(['due'], T0 + 99), []);
      const claimed = await store.tasks.reserve(['due', 'later', 'missing'], T0 + 100);
      assert.equal(claimed.length, 1);
      const due = claimed[0]!;
      assert.equal(due.id, 'due');
      assert.equal((await store.tasks.get('due'))?.state, 'reserved');
      assert.equal(due.attempts, 1);
      assert.equal(due.reservedUntil, T0 + 100 + 5_000);
      assert.equal(typeof due.receipt, 'string');
      assert.ok(due.receipt!.length > 0);
      assert.deepEqual(JSON.parse(due.payload), { id: 'due', n: 1 });
      assert.equal((await store.tasks.get('later'))?.state, 'pending');
    });

    it('reserves a task only once, and honours a ttr override', async () => {
      await store.tasks.schedule([task('a', { runAt: T0 })], T0);
      const [first] = await store.tasks.reserve(['a'], T0, 250);
      assert.equal(first?.reservedUntil, T0 + 250);
      assert.deepEqual(await store.tasks.reserve(['a'], T0 + 1), []);
    });

    it('returns reserved records in input order', async () => {
      await store.tasks.schedule([task('x', { runAt: T0 }), task('y', { runAt: T0 }), task('z', { runAt: T0 })], T0);
      const claimed = await store.tasks.reserve(['z', 'x', 'y'], T0);
      assert.deepEqual(
        claimed.map((r) => r.id),
        ['z', 'x', 'y'],
      );
      assert.equal(new Set(claimed.map((r) => r.receipt)).size, 3);
    });
  });
}
