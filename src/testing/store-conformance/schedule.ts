/** The store suite's cases of "schedule" (runStoreConformance, ./index.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { DEFAULT_BACKOFF } from '../../core/task/backoff.js';
import { T0, task } from './fixtures.js';

/** `store` is the store of the case running: a fresh one for each. */
export function scheduleCases(store: TaskStore): void {
  describe('schedule', () => {
    it('creates pending tasks and reports each in input order', async () => {
      const outcomes = await store.tasks.schedule([task('a'), task('b', { runAt: T0 + 500 })], T0);
      assert.deepEqual(
        outcomes.map((o) => [o.id, o.runAt, o.created]),
        [
          ['a', T0 + 1_000, true],
          ['b', T0 + 500, true],
        ],
      );
      assert.equal(outcomes[0]!.ref?.kind, 'run');
      assert.equal(outcomes[0]!.ref?.dueAt, T0 + 1_000);
      assert.equal(outcomes[0]!.ref?.topic, 'orders');
      const a = await store.tasks.get('a');
      assert.ok(a);
      assert.equal(a.state, 'pending');
      assert.equal(a.attempts, 0);
      assert.equal(a.topic, 'orders');
      assert.deepEqual(JSON.parse(a.payload), { id: 'a', n: 1 });
      assert.equal(a.runAt, T0 + 1_000);
      assert.equal(a.maxAttempts, 3);
      assert.equal(a.ttrMs, 5_000);
      assert.deepEqual(a.backoff, { ...DEFAULT_BACKOFF, jitter: 0 });
      assert.equal(a.createdAt, T0);
      assert.equal(a.receipt, null);
      assert.equal(a.reservedUntil, null);
    });

    it('is idempotent by id: an existing id is reported, not changed', async () => {
      await store.tasks.schedule([task('a')], T0);
      const [again] = await store.tasks.schedule([task('a', { runAt: T0 + 9_999, topic: 'other', payload: '"x"' })], T0 + 1);
      assert.deepEqual([again!.id, again!.runAt, again!.created, again!.ref], ['a', T0 + 1_000, false, null]);
      const a = await store.tasks.get('a');
      assert.equal(a?.topic, 'orders');
      assert.equal(a?.runAt, T0 + 1_000);
    });

    it('answers an id already pending on the same topic with no timer or with its own (a retried call)', async () => {
      await store.tasks.schedule([task('r')], T0);
      const [again] = await store.tasks.schedule([task('r', { runAt: T0 + 5_000 })], T0 + 1);
      assert.deepEqual([again!.created, again!.runAt], [false, T0 + 1_000]);
      // The Redis store gives it, so that a task whose first call's reply was lost still fires.
      if (again!.ref !== null) assert.deepEqual([again!.ref.id, again!.ref.topic, again!.ref.kind, again!.ref.dueAt], ['r', 'orders', 'run', T0 + 1_000]);
      assert.equal((await store.tasks.get('r'))?.runAt, T0 + 1_000);
    });

    it('keeps the first of ids repeated within one call', async () => {
      const outcomes = await store.tasks.schedule([task('dup', { runAt: T0 + 1 }), task('dup', { runAt: T0 + 2 })], T0);
      assert.deepEqual(
        outcomes.map((o) => [o.created, o.runAt]),
        [
          [true, T0 + 1],
          [false, T0 + 1],
        ],
      );
      assert.equal((await store.tasks.get('dup'))?.runAt, T0 + 1);
    });

    it('stores payloads exactly, including unicode and large ones', async () => {
      const big = JSON.stringify({ s: 'x'.repeat(200_000), u: 'ünïcødé ✓ 😀' });
      await store.tasks.schedule([task('big', { payload: big })], T0);
      assert.equal((await store.tasks.get('big'))?.payload, big);
    });

    it('keeps each task of one batch as given when their topics, policies and urls differ', async () => {
      // Stores may send a value the whole batch shares once (PostgreSQL does): this mixes them.
      const tasks = [
        task('m1', { topic: 'one', maxAttempts: 1, ttrMs: 1_000, backoff: { baseMs: 10, factor: 1.5, maxMs: 100, jitter: 0.25 } }),
        task('m2', { topic: 'two', url: 'https://hooks.example.com/m2', payload: '"quote \\" and \\\\ backslash"' }),
        task('m3', { topic: 'one', maxAttempts: 7, ttrMs: 9_000, runAt: T0 + 5 }),
      ];
      await store.tasks.schedule(tasks, T0);
      for (const t of tasks) {
        const got = await store.tasks.get(t.id);
        assert.ok(got);
        assert.deepEqual(
          [got.topic, got.payload, got.runAt, got.maxAttempts, got.ttrMs, got.backoff, got.url],
          [t.topic, t.payload, t.runAt, t.maxAttempts, t.ttrMs, t.backoff, t.url ?? null],
          t.id,
        );
      }
    });

    it('returns null for unknown ids', async () => {
      assert.equal(await store.tasks.get('nope'), null);
    });
  });
}
