/** The store suite's cases of "own push url" (runStoreConformance, ./index.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { pushLaneOf } from '../../core/task/model.js';
import { T0, task, loadAll } from './fixtures.js';


/** The push lane of the fixtures' topic. */
const ORDERS_PUSH = pushLaneOf('orders');
/** `store` is the store of the case running: a fresh one for each. */
export function ownPushUrlCases(store: TaskStore): void {
  describe('own push url', () => {
    // Separators of the Redis packed body and an escape character, all kept exactly.
    const URL_1 = 'https://hooks.example.com/a,b|c%2Cd/%7C?x=1,2&y=%25';
    const URL_2 = 'http://10.0.0.1:8080/hook';

    it('is kept on the task; its timers are filed under the push lane, its topic and counts stay', async () => {
      const outcomes = await store.tasks.schedule([task('u', { url: URL_1 }), task('p')], T0);
      assert.equal(outcomes[0]!.ref?.topic, ORDERS_PUSH);
      assert.equal(outcomes[1]!.ref?.topic, 'orders');
      const u = await store.tasks.get('u');
      assert.equal(u?.url, URL_1);
      assert.equal(u?.topic, 'orders');
      assert.equal((await store.tasks.get('p'))?.url, null);
      const refs = await loadAll(store, T0 + 10_000);
      assert.deepEqual(
        refs.map((r) => [r.id, r.topic]),
        [
          ['u', ORDERS_PUSH],
          ['p', 'orders'],
        ],
      );
      assert.deepEqual({ ...(await store.tasks.stats()).byTopic }, { orders: { pending: 2 } });
      assert.deepEqual(
        (await store.tasks.list({ topic: 'orders', limit: 10 })).map((r) => [r.id, r.url]),
        [
          ['p', null],
          ['u', URL_1],
        ],
      );
    });

    it("files each topic's tasks with their own url under that topic's push lane", async () => {
      const outcomes = await store.tasks.schedule([task('a', { url: URL_1 }), task('b', { topic: 'emails', url: URL_2 }), task('c', { topic: 'emails' })], T0);
      assert.deepEqual(
        outcomes.map((o) => o.ref?.topic),
        [ORDERS_PUSH, pushLaneOf('emails'), 'emails'],
      );
      const refs = await loadAll(store, T0 + 10_000);
      assert.deepEqual(
        refs.map((r) => [r.id, r.topic]).sort(),
        [
          ['a', ORDERS_PUSH],
          ['b', pushLaneOf('emails')],
          ['c', 'emails'],
        ],
      );
      const [b] = await store.tasks.reserve(['b'], T0 + 1_000);
      assert.deepEqual([b?.topic, b?.url], ['emails', URL_2]);
    });

    it('survives a batch insert among tasks without one, and settings that differ', async () => {
      const tasks = Array.from({ length: 40 }, (_, i) => task(`b${i}`, i % 3 === 0 ? { url: i % 2 === 0 ? URL_1 : URL_2 } : i % 5 === 0 ? { ttrMs: 7_000 } : {}));
      const outcomes = await store.tasks.schedule(tasks, T0);
      for (const [i, outcome] of outcomes.entries()) assert.equal(outcome.ref?.topic, i % 3 === 0 ? ORDERS_PUSH : 'orders', `b${i}`);
      for (let i = 0; i < 40; i++) assert.equal((await store.tasks.get(`b${i}`))?.url, i % 3 === 0 ? (i % 2 === 0 ? URL_1 : URL_2) : null, `b${i}`);
    });

    it('is handed out by reserve, and kept through nack (with an error), expire, reschedule and retryDead', async () => {
      await store.tasks.schedule([task('u', { url: URL_1, maxAttempts: 2 })], T0);
      const [reserved] = await store.tasks.reserve(['u'], T0 + 1_000);
      assert.equal(reserved?.url, URL_1);
      assert.equal(reserved?.topic, 'orders');
      const nacked = await store.tasks.nack({ id: 'u', receipt: reserved.receipt!, now: T0 + 1_001, delayMs: 10, error: 'HTTP 503: down, | again', random: 0 });
      assert.equal(nacked.status, 'retrying');
      if (nacked.status === 'retrying') assert.deepEqual([nacked.ref.topic, nacked.topic], [ORDERS_PUSH, 'orders'], 'the timer on the push lane, the outcome with the task\'s topic');
      const failed = await store.tasks.get('u');
      assert.deepEqual([failed?.url, failed?.lastError, failed?.payload], [URL_1, 'HTTP 503: down, | again', JSON.stringify({ id: 'u', n: 1 })]);
      const moved = await store.tasks.reschedule('u', T0 + 2_000, T0 + 1_002);
      assert.equal(moved.status === 'rescheduled' ? moved.ref.topic : moved.status, ORDERS_PUSH);
      const [again] = await store.tasks.reserve(['u'], T0 + 2_000);
      assert.equal(again?.url, URL_1);
      const expired = await store.tasks.expire('u', again.receipt!, T0 + 2_000 + 5_000);
      assert.deepEqual(expired, { status: 'dead', topic: 'orders' });
      const retried = await store.tasks.retryDead('u', T0 + 9_000, T0 + 8_000);
      assert.equal(retried.status === 'retried' ? retried.ref.topic : retried.status, ORDERS_PUSH);
      assert.equal((await store.tasks.get('u'))?.url, URL_1);
      const refs = await loadAll(store, T0 + 10_000);
      assert.deepEqual(refs.map((r) => [r.id, r.topic]), [['u', ORDERS_PUSH]]);
    });

    it('a reservation of a task with one runs out under the push lane', async () => {
      await store.tasks.schedule([task('u', { url: URL_2 })], T0);
      await store.tasks.reserve(['u'], T0 + 1_000);
      const [ttr] = await loadAll(store, T0 + 100_000);
      assert.deepEqual([ttr?.kind, ttr?.topic], ['ttr', ORDERS_PUSH]);
      const expired = await store.tasks.expire('u', ttr!.receipt!, T0 + 6_000);
      assert.equal(expired.status === 'retrying' ? expired.ref.topic : expired.status, ORDERS_PUSH);
    });

    it('an id scheduled again with or without a url gets no timer on the other lane', async () => {
      await store.tasks.schedule([task('p'), task('u', { url: URL_1 })], T0);
      const [p, u] = await store.tasks.schedule([task('p', { url: URL_1 }), task('u')], T0 + 1);
      assert.equal(p?.created, false);
      assert.equal(u?.created, false);
      if (p?.ref) assert.equal(p.ref.topic, 'orders');
      if (u?.ref) assert.equal(u.ref.topic, ORDERS_PUSH);
      assert.equal((await store.tasks.get('p'))?.url, null);
      assert.equal((await store.tasks.get('u'))?.url, URL_1);
    });
  });
}
