/** The store suite's cases of "inspection" (runStoreConformance, ./index.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { cutPage, listedSize } from '../../core/task/list-page.js';
import { T0, task, loadAll } from './fixtures.js';

/** `store` is the store of the case running: a fresh one for each. */
export function inspectionCases(store: TaskStore): void {
  describe('inspection', () => {
    it('cancelDead: dead -> cancelled, counted, listed and purged as a cancelled task; anything else refused', async () => {
      await store.tasks.schedule([task('d1', { runAt: T0, maxAttempts: 1 }), task('d2', { runAt: T0, maxAttempts: 1 }), task('p1', { runAt: T0 + 60_000 })], T0);
      for (const claimed of await store.tasks.reserve(['d1', 'd2'], T0)) assert.equal((await store.tasks.nack({ id: claimed.id, receipt: claimed.receipt!, now: T0, random: 0, error: 'x' })).status, 'dead');
      assert.equal(await store.tasks.cancelDead('d1', T0 + 1), 'cancelled');
      assert.equal(await store.tasks.cancelDead('d1', T0 + 2), 'not_dead');
      assert.equal(await store.tasks.cancelDead('p1', T0 + 2), 'not_dead');
      assert.equal(await store.tasks.cancelDead('missing', T0 + 2), 'not_found');
      const d1 = await store.tasks.get('d1');
      assert.equal(d1?.state, 'cancelled');
      assert.equal(d1?.updatedAt, T0 + 1);
      assert.deepEqual((await store.tasks.list({ state: 'dead', limit: 10 })).map((r) => r.id), ['d2']);
      assert.deepEqual((await store.tasks.list({ state: 'cancelled', limit: 10 })).map((r) => r.id), ['d1']);
      const stats = await store.tasks.stats();
      assert.equal(stats.byState.dead, 1);
      assert.equal(stats.byState.cancelled, 1);
      assert.equal(await store.tasks.purge(T0 + 10, 10), 1);
      assert.equal(await store.tasks.get('d1'), null);
      assert.equal((await store.tasks.get('d2'))?.state, 'dead');
    });

    it('dueHistogram counts pending tasks per bucket from the index, through every move in and out of pending', async () => {
      // The engine's loader reads the near window first: a store that parks far tasks files these in its index.
      await store.tasks.loadDue(T0 + 10 * 60_000, null, 100);
      await store.tasks.schedule(
        [
          task('a', { runAt: T0 + 1_000 }),
          task('b', { runAt: T0 + 30_000 }),
          task('c', { runAt: T0 + 61_000 }),
          task('m', { runAt: T0 + 61_000, topic: 'mail' }),
          task('x', { runAt: T0 + 90_000 }),
          task('d', { runAt: T0 + 150_000 }),
          task('e', { runAt: T0 + 150_000 }),
          task('r', { runAt: T0 }),
          task('f', { runAt: T0 + 300_000 }),
          task('g', { runAt: T0 - 60_000 }),
        ],
        T0,
      );
      assert.equal((await store.tasks.cancel('x', T0)).status, 'cancelled');
      assert.equal((await store.tasks.reschedule('e', T0 + 200_000, T0)).status, 'rescheduled');
      const [r] = await store.tasks.reserve(['r'], T0);
      const query = { from: T0, to: T0 + 300_000, bucketMs: 60_000 };
      let all = await store.tasks.dueHistogram(query);
      assert.ok(all.coveredUntil >= query.to, `covered until ${all.coveredUntil - T0}`);
      assert.deepEqual(all.counts, [2, 2, 1, 1, 0]);
      assert.equal((await store.tasks.nack({ id: 'r', receipt: r!.receipt!, now: T0, delayMs: 240_000, random: 0 })).status, 'retrying');
      all = await store.tasks.dueHistogram(query);
      assert.deepEqual(all.counts, [2, 2, 1, 1, 1]);
      // A last bucket cut short by `to`.
      assert.deepEqual((await store.tasks.dueHistogram({ from: T0, to: T0 + 300_000, bucketMs: 120_000 })).counts, [4, 2, 1]);
      // An empty range, and a range before every task.
      assert.deepEqual((await store.tasks.dueHistogram({ from: T0 + 3_600_000, to: T0 + 3_720_000, bucketMs: 60_000 })).counts, [0, 0]);
      // By topic, where the store's index has topics (coveredUntil says how far).
      const orders = await store.tasks.dueHistogram({ ...query, topic: 'orders' });
      const mail = await store.tasks.dueHistogram({ ...query, topic: 'mail' });
      assert.equal(orders.counts.length, 5);
      assert.ok(orders.coveredUntil >= query.from && orders.coveredUntil <= query.to);
      if (orders.coveredUntil === query.to) assert.deepEqual(orders.counts, [2, 1, 1, 1, 1]);
      if (mail.coveredUntil === query.to) assert.deepEqual(mail.counts, [0, 1, 0, 0, 0]);
      assert.deepEqual((await store.tasks.dueHistogram({ ...query, topic: 'nothing' })).counts, [0, 0, 0, 0, 0]);
    });

    it('dueHistogram counts far-future (parked) tasks too: per hour over days, per minute over the next hour, by topic', async () => {
      const MINUTE = 60_000;
      const HOUR = 3_600_000;
      const DAY = 24 * HOUR;
      const topics = ['orders', 'mail', 'sms'];
      // A fixed pseudo-random spread: a quarter due within the hour, a quarter within two
      // days, half within three weeks (beyond every store's near index).
      let seed = 7;
      const random = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
      const spread = (from: number): number => {
        const r = random();
        const span = r < 0.25 ? HOUR : r < 0.5 ? 2 * DAY : 21 * DAY;
        return from + Math.floor(random() * span);
      };
      let now = T0;
      await store.tasks.loadDue(now + 10 * MINUTE, null, 100);
      await store.tasks.schedule(Array.from({ length: 400 }, (_, i) => task(`t${i}`, { topic: topics[i % 3]!, runAt: spread(now) })), now);
      for (let i = 0; i < 400; i += 7) await store.tasks.cancel(`t${i}`, now);
      for (let i = 1; i < 400; i += 11) if (i % 7 !== 0) await store.tasks.reschedule(`t${i}`, spread(now), now);
      // Time passes: the near index is read (far tasks come into it), due tasks are reserved.
      for (const step of [20 * MINUTE, 3 * HOUR, 30 * HOUR]) {
        now = T0 + step;
        const due = await loadAll(store, now);
        for (let i = 0; i < due.length; i += 100) await store.tasks.reserve(due.slice(i, i + 100).map((ref) => ref.id), now);
        await store.tasks.schedule(Array.from({ length: 60 }, (_, i) => task(`n${step}-${i}`, { topic: topics[i % 3]!, runAt: spread(now) })), now);
        for (let i = 2; i < 400; i += 13) await store.tasks.reschedule(`t${i}`, spread(now), now);
      }
      // The reference: every pending task, listed.
      const pending: Array<{ topic: string; runAt: number }> = [];
      for (let afterId: string | undefined; ; ) {
        const page = await store.tasks.list({ state: 'pending', limit: 500, ...(afterId !== undefined ? { afterId } : {}) });
        pending.push(...page);
        if (page.length < 500) break;
        afterId = page[page.length - 1]!.id;
      }
      assert.ok(pending.filter((t) => t.runAt >= now + 2 * DAY).length > 50, 'some tasks are far ahead');
      const expected = (from: number, to: number, bucketMs: number, topic?: string): number[] => {
        const counts = new Array<number>(Math.ceil((to - from) / bucketMs)).fill(0);
        for (const t of pending) if ((topic === undefined || t.topic === topic) && t.runAt >= from && t.runAt < to) counts[Math.floor((t.runAt - from) / bucketMs)]!++;
        return counts;
      };
      const hourFrom = Math.floor(now / HOUR) * HOUR;
      const minuteFrom = Math.floor(now / MINUTE) * MINUTE;
      for (const topic of [undefined, 'orders', 'mail']) {
        const label = topic ?? 'all topics';
        for (const [from, to, bucketMs] of [
          [hourFrom, hourFrom + 21 * DAY, HOUR],
          [hourFrom, hourFrom + 22 * DAY, 2 * HOUR],
          [minuteFrom, minuteFrom + HOUR, MINUTE],
        ] as const) {
          const got = await store.tasks.dueHistogram({ from, to, bucketMs, ...(topic !== undefined ? { topic } : {}) });
          assert.equal(got.coveredUntil, to, `${label}, buckets of ${bucketMs / MINUTE} min: covered until ${(got.coveredUntil - from) / MINUTE} min`);
          assert.deepEqual(got.counts, expected(from, to, bucketMs, topic), `${label}, buckets of ${bucketMs / MINUTE} min`);
        }
      }
    });

    it('counts tasks by state and by topic', async () => {
      await store.tasks.schedule([task('a', { runAt: T0 }), task('b', { runAt: T0 }), task('c', { topic: 'mail' }), task('d', { topic: 'mail' })], T0);
      const [a] = await store.tasks.reserve(['a'], T0);
      await store.tasks.ack('a', a!.receipt!, T0);
      await store.tasks.reserve(['b'], T0);
      await store.tasks.cancel('d', T0);
      const stats = await store.tasks.stats();
      assert.deepEqual(stats.byState, { pending: 1, reserved: 1, completed: 1, dead: 0, cancelled: 1 });
      assert.deepEqual(stats.byTopic['orders'], { reserved: 1, completed: 1 });
      assert.deepEqual(stats.byTopic['mail'], { pending: 1, cancelled: 1 });
    });

    it('lists by id order with topic and state filters, paged', async () => {
      await store.tasks.schedule(['e', 'b', 'd', 'a', 'c'].map((id) => task(id, { topic: id < 'c' ? 'one' : 'two' })), T0);
      await store.tasks.cancel('d', T0);
      const page1 = await store.tasks.list({ limit: 2 });
      assert.deepEqual(
        page1.map((r) => r.id),
        ['a', 'b'],
      );
      const page2 = await store.tasks.list({ limit: 2, afterId: 'b' });
      assert.deepEqual(
        page2.map((r) => r.id),
        ['c', 'd'],
      );
      assert.deepEqual(
        (await store.tasks.list({ limit: 10, topic: 'two', state: 'pending' })).map((r) => r.id),
        ['c', 'e'],
      );
      assert.deepEqual(
        (await store.tasks.list({ limit: 10, state: 'cancelled' })).map((r) => r.id),
        ['d'],
      );
    });

    it('lists with a byte bound (maxSize): the page ends after the task that passes it, never empty, exactly as cutPage cuts', async () => {
      // Payloads of 1,000 to 9,000 characters, in an order unlike the ids'; some dead (the indexed listings).
      const ids = ['f', 'b', 'h', 'a', 'e', 'c', 'g', 'd', 'i'];
      await store.tasks.schedule(
        ids.map((id, i) => task(id, { runAt: T0, payload: JSON.stringify('x'.repeat(1_000 * ((i * 5) % 9 + 1))), maxAttempts: 1 })),
        T0,
      );
      const claimed = await store.tasks.reserve(['b', 'c', 'e', 'g'], T0);
      for (const r of claimed) assert.equal((await store.tasks.nack({ id: r.id, receipt: r.receipt!, now: T0 + 1, random: 0, error: 'e'.repeat(300) })).status, 'dead');
      for (const state of [undefined, 'pending', 'dead'] as const) {
        const all = await store.tasks.list({ limit: 100, ...(state === undefined ? {} : { state }) });
        assert.ok(all.length >= 4, `${state ?? 'any'}: ${all.length}`);
        const sizes = all.map(listedSize);
        // Budgets at, just under and just over the running sums, and below one task.
        const budgets = [0, 1, sizes[0]! - 1, sizes[0]!, sizes[0]! + sizes[1]!, sizes[0]! + sizes[1]! + 1, sizes.reduce((a, b) => a + b, 0)];
        for (const maxSize of budgets)
          for (const limit of [1, 2, 3, 100]) {
            const page = await store.tasks.list({ limit, maxSize, ...(state === undefined ? {} : { state }) });
            assert.deepEqual(
              page.map((r) => r.id),
              cutPage(all, limit, maxSize).map((r) => r.id),
              `${state ?? 'any'}, limit ${limit}, maxSize ${maxSize}`,
            );
          }
        // Paging with a bound walks the whole listing, each page from the last id of the one before.
        const walked: string[] = [];
        for (let after: string | undefined; ; ) {
          const page = await store.tasks.list({ limit: 100, maxSize: sizes[0]!, ...(state === undefined ? {} : { state }), ...(after === undefined ? {} : { afterId: after }) });
          if (page.length === 0) break;
          const rest = all.filter((r) => after === undefined || r.id > after);
          assert.deepEqual(page.map((r) => r.id), cutPage(rest, 100, sizes[0]).map((r) => r.id));
          walked.push(...page.map((r) => r.id));
          after = page.at(-1)!.id;
        }
        assert.deepEqual(walked, all.map((r) => r.id));
      }
    });

    it('lists dead and reserved tasks by id order, paged, by topic, and only while in that state', async () => {
      const ids = ['k', 'c', 'h', 'a', 'f', 'b', 'j', 'e', 'i', 'g', 'd'];
      await store.tasks.schedule(
        ids.map((id) => task(id, { runAt: T0, topic: id < 'f' ? 'one' : 'two', maxAttempts: 1 })),
        T0,
      );
      const claimed = await store.tasks.reserve(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], T0);
      const receipt = (id: string): string => claimed.find((r) => r.id === id)!.receipt!;
      for (const id of ['b', 'd', 'f', 'h']) assert.deepEqual(await store.tasks.nack({ id, receipt: receipt(id), now: T0 + 1, random: 0 }), { status: 'dead', topic: id < 'f' ? 'one' : 'two' });
      await store.tasks.ack('a', receipt('a'), T0 + 1);
      // dead: b d f h; reserved: c e g; pending: i j k; completed: a
      const pages: string[][] = [];
      for (let after: string | undefined; ; ) {
        const page = await store.tasks.list({ state: 'dead', limit: 3, ...(after === undefined ? {} : { afterId: after }) });
        if (page.length === 0) break;
        assert.ok(page.every((r) => r.state === 'dead'));
        pages.push(page.map((r) => r.id));
        after = page.at(-1)!.id;
      }
      assert.deepEqual(pages, [['b', 'd', 'f'], ['h']]);
      assert.deepEqual(
        (await store.tasks.list({ state: 'dead', topic: 'two', limit: 10 })).map((r) => r.id),
        ['f', 'h'],
      );
      assert.deepEqual(
        (await store.tasks.list({ state: 'reserved', limit: 10 })).map((r) => r.id),
        ['c', 'e', 'g'],
      );
      assert.deepEqual(
        (await store.tasks.list({ state: 'reserved', topic: 'one', limit: 10, afterId: 'c' })).map((r) => r.id),
        ['e'],
      );
      await store.tasks.ack('e', receipt('e'), T0 + 2);
      assert.equal((await store.tasks.retryDead('d', T0 + 10, T0 + 2)).status, 'retried');
      assert.deepEqual(
        (await store.tasks.list({ state: 'reserved', limit: 10 })).map((r) => r.id),
        ['c', 'g'],
      );
      assert.deepEqual(
        (await store.tasks.list({ state: 'dead', limit: 10 })).map((r) => r.id),
        ['b', 'f', 'h'],
      );
    });

    it('purges finished tasks older than the cutoff and frees their ids', async () => {
      await store.tasks.schedule([task('old', { runAt: T0 }), task('new', { runAt: T0 }), task('live'), task('dead', { runAt: T0, maxAttempts: 1 })], T0);
      const claimed = await store.tasks.reserve(['old', 'new', 'dead'], T0);
      const receipt = (id: string): string => claimed.find((r) => r.id === id)!.receipt!;
      await store.tasks.ack('old', receipt('old'), T0 + 10);
      await store.tasks.ack('new', receipt('new'), T0 + 1_000);
      await store.tasks.nack({ id: 'dead', receipt: receipt('dead'), now: T0 + 10, random: 0 });
      assert.equal(await store.tasks.purge(T0 + 500, 100), 1);
      assert.equal(await store.tasks.get('old'), null);
      assert.equal((await store.tasks.get('new'))?.state, 'completed');
      assert.equal((await store.tasks.get('live'))?.state, 'pending');
      assert.equal((await store.tasks.get('dead'))?.state, 'dead');
      const [reused] = await store.tasks.schedule([task('old')], T0 + 2_000);
      assert.equal(reused?.created, true);
      const stats = await store.tasks.stats();
      assert.equal(stats.byState.completed, 1);
    });
  });
}
