/** The store suite's cases of a task's trace context (runStoreConformance, ./index.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { pushLaneOf } from '../../core/task/model.js';
import { T0, task, loadAll } from './fixtures.js';

/** A traceparent alone, and one with a tracestate holding the Redis body's separators, '%' and spaces (all legal W3C value characters). */
const TRACE_1 = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const TRACE_2 = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00 congo=t61rcWkgMzE|x%2C,rojo=00f0 67aa';
const URL = 'https://hooks.example.com/t,race|%7C';

/** `store` is the store of the case running: a fresh one for each. */
export function traceContextCases(store: TaskStore): void {
  describe('trace context', () => {
    it('is kept exactly on the task, listed, and null for a task without one; it changes no lane', async () => {
      const outcomes = await store.tasks.schedule([task('a', { trace: TRACE_1 }), task('b', { trace: TRACE_2 }), task('c'), task('d', { trace: TRACE_2, url: URL })], T0);
      assert.deepEqual(
        outcomes.map((o) => o.ref?.topic),
        ['orders', 'orders', 'orders', pushLaneOf('orders')],
      );
      assert.deepEqual(
        [(await store.tasks.get('a'))?.trace, (await store.tasks.get('b'))?.trace, (await store.tasks.get('c'))?.trace ?? null, (await store.tasks.get('d'))?.trace],
        [TRACE_1, TRACE_2, null, TRACE_2],
      );
      assert.equal((await store.tasks.get('d'))?.url, URL);
      assert.equal((await store.tasks.get('b'))?.url, null);
      assert.deepEqual(
        (await store.tasks.list({ topic: 'orders', limit: 10 })).map((r) => [r.id, r.trace ?? null]),
        [
          ['a', TRACE_1],
          ['b', TRACE_2],
          ['c', null],
          ['d', TRACE_2],
        ],
      );
      const refs = await loadAll(store, T0 + 10_000);
      assert.deepEqual(refs.map((r) => [r.id, r.topic]).sort(), [
        ['a', 'orders'],
        ['b', 'orders'],
        ['c', 'orders'],
        ['d', pushLaneOf('orders')],
      ]);
    });

    it('survives a batch insert among tasks without one, and settings that differ', async () => {
      const traceOf = (i: number): string | undefined => (i % 3 === 0 ? (i % 2 === 0 ? TRACE_1 : TRACE_2) : undefined);
      const tasks = Array.from({ length: 40 }, (_, i) => {
        const trace = traceOf(i);
        const overrides = i % 5 === 0 ? { ttrMs: 7_000 } : {};
        return task(`b${i}`, trace === undefined ? overrides : { ...overrides, trace });
      });
      await store.tasks.schedule(tasks, T0);
      for (let i = 0; i < 40; i++) assert.equal((await store.tasks.get(`b${i}`))?.trace ?? null, traceOf(i) ?? null, `b${i}`);
    });

    it('is handed out by reserve, and kept through nack, reschedule, expire, retryDead and ack', async () => {
      await store.tasks.schedule([task('t', { trace: TRACE_2, maxAttempts: 2 }), task('p')], T0);
      const reserved = await store.tasks.reserve(['t', 'p'], T0 + 1_000);
      const byId = new Map(reserved.map((r) => [r.id, r]));
      assert.equal(byId.get('t')?.trace, TRACE_2);
      assert.equal(byId.get('p')?.trace ?? null, null);
      const t = byId.get('t')!;
      const nacked = await store.tasks.nack({ id: 't', receipt: t.receipt!, now: T0 + 1_001, delayMs: 10, error: 'down, | again', random: 0 });
      assert.equal(nacked.status, 'retrying');
      assert.equal((await store.tasks.get('t'))?.trace, TRACE_2);
      const moved = await store.tasks.reschedule('t', T0 + 2_000, T0 + 1_002);
      assert.equal(moved.status, 'rescheduled');
      const [again] = await store.tasks.reserve(['t'], T0 + 2_000);
      assert.equal(again?.trace, TRACE_2);
      assert.deepEqual(await store.tasks.expire('t', again.receipt!, T0 + 2_000 + 5_000), { status: 'dead', topic: 'orders' });
      assert.equal((await store.tasks.get('t'))?.trace, TRACE_2);
      const retried = await store.tasks.retryDead('t', T0 + 9_000, T0 + 8_000);
      assert.equal(retried.status, 'retried');
      const [last] = await store.tasks.reserve(['t'], T0 + 9_000);
      assert.equal(last?.trace, TRACE_2);
      await store.tasks.ack('t', last.receipt!, T0 + 9_001);
      const done = await store.tasks.get('t');
      assert.deepEqual([done?.state, done?.trace], ['completed', TRACE_2]);
    });

    it('an id scheduled again keeps the trace it was created with', async () => {
      await store.tasks.schedule([task('k', { trace: TRACE_1 }), task('n')], T0);
      const [k, n] = await store.tasks.schedule([task('k', { trace: TRACE_2 }), task('n', { trace: TRACE_1 })], T0 + 1);
      assert.deepEqual([k?.created, n?.created], [false, false]);
      assert.equal((await store.tasks.get('k'))?.trace, TRACE_1);
      assert.equal((await store.tasks.get('n'))?.trace ?? null, null);
    });
  });
}
