/** The store suite's cases of "recurring schedules" (runStoreConformance, ./index.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { T0, scheduleRecord } from './fixtures.js';

/** `store` is the store of the case running: a fresh one for each. */
export function recurringScheduleCases(store: TaskStore): void {
  describe('recurring schedules', () => {
    it('gives back what was put, every field; an unknown id has none', async () => {
      const daily = scheduleRecord('daily');
      const every = scheduleRecord('every', { cron: null, tz: 'UTC', everyMs: 1_000, startAt: null, endAt: T0 + 1e9, limit: null, misfire: 'all', paused: true, nextAt: null, lastAt: T0, count: 7 });
      const pushed = scheduleRecord('pushed', { url: 'https://hooks.example.com/cron?a=1,2' });
      const ranked = scheduleRecord('ranked', { priority: -100 });
      const rankedPushed = scheduleRecord('ranked-pushed', { priority: 100, url: 'https://hooks.example.com/r' });
      await store.schedules.putSchedule(ranked);
      await store.schedules.putSchedule(rankedPushed);
      assert.deepEqual(await store.schedules.getSchedule('ranked'), ranked);
      assert.deepEqual(await store.schedules.getSchedule('ranked-pushed'), rankedPushed);
      await store.schedules.putSchedule(daily);
      await store.schedules.putSchedule(every);
      await store.schedules.putSchedule(pushed);
      assert.deepEqual(await store.schedules.getSchedule('daily'), daily);
      assert.deepEqual(await store.schedules.getSchedule('every'), every);
      assert.deepEqual(await store.schedules.getSchedule('pushed'), pushed);
      assert.deepEqual((await store.schedules.listSchedules()).find((s) => s.id === 'pushed'), pushed);
      assert.equal(await store.schedules.getSchedule('never'), null);
    });

    it('lists by id in ascending order, keeps ids of every valid character apart, deletes', async () => {
      const ids = ['b', 'a.b:c-d_E', 'a.b:c-d_e', '__proto__', 'A'];
      for (const [i, id] of ids.entries()) await store.schedules.putSchedule(scheduleRecord(id, { count: i }));
      assert.deepEqual((await store.schedules.listSchedules()).map((s) => [s.id, s.count]), [['A', 4], ['__proto__', 3], ['a.b:c-d_E', 1], ['a.b:c-d_e', 2], ['b', 0]]);
      assert.equal(await store.schedules.deleteSchedule('b'), true);
      assert.equal(await store.schedules.deleteSchedule('b'), false);
      assert.equal(await store.schedules.getSchedule('b'), null);
      assert.equal((await store.schedules.listSchedules()).length, 4);
    });

    it('puts and gets many in one call: one answer per id in input order, null for none', async () => {
      const a = scheduleRecord('a');
      const b = scheduleRecord('b', { url: 'https://hooks.example.com/b', count: 3 });
      await store.schedules.putSchedules([a, b]);
      await store.schedules.putSchedules([]);
      assert.deepEqual(await store.schedules.getSchedules(['b', 'none', 'a']), [b, null, a]);
      assert.deepEqual(await store.schedules.getSchedules([]), []);
      const a2 = { ...a, count: 9 };
      await store.schedules.putSchedules([a2]);
      assert.deepEqual(await store.schedules.getSchedule('a'), a2);
    });

    it('puts new schedules only: an id that has one keeps it and answers it', async () => {
      const a = scheduleRecord('a', { count: 4 });
      await store.schedules.putSchedule(a);
      const before = await store.schedules.schedulesVersion();
      const b = scheduleRecord('b', { url: 'https://hooks.example.com/b' });
      assert.deepEqual(await store.schedules.putNewSchedules([b, { ...a, count: 0, rev: 7 }]), [null, a]);
      assert.deepEqual(await store.schedules.getSchedule('a'), a, 'left as it was');
      assert.deepEqual(await store.schedules.getSchedule('b'), b);
      assert.notEqual(await store.schedules.schedulesVersion(), before);
      const after = await store.schedules.schedulesVersion();
      assert.deepEqual(await store.schedules.putNewSchedules([a, b]), [a, b]);
      assert.equal(await store.schedules.schedulesVersion(), after, 'nothing stored, nothing to re-read');
      assert.deepEqual(await store.schedules.putNewSchedules([]), []);
    });

    it('swaps only from the exact stored schedule: a stale expected record changes nothing', async () => {
      const v1 = scheduleRecord('s');
      await store.schedules.putSchedule(v1);
      const v2 = { ...v1, nextAt: T0 + 120_000, lastAt: T0 + 60_000, count: 1 };
      assert.equal(await store.schedules.swapSchedule(v1, v2), true);
      assert.deepEqual(await store.schedules.getSchedule('s'), v2);
      // A second process planned from v1 too: its swap fails, v2 stays.
      assert.equal(await store.schedules.swapSchedule(v1, { ...v1, count: 99 }), false);
      assert.deepEqual(await store.schedules.getSchedule('s'), v2);
      // A swap of a deleted schedule does not bring it back.
      await store.schedules.deleteSchedule('s');
      assert.equal(await store.schedules.swapSchedule(v2, { ...v2, count: 2 }), false);
      assert.equal(await store.schedules.getSchedule('s'), null);
    });

    it('swaps many in one call, each on its own', async () => {
      const a = scheduleRecord('a');
      const b = scheduleRecord('b');
      await store.schedules.putSchedule(a);
      await store.schedules.putSchedule(b);
      const results = await store.schedules.swapSchedules([
        { expected: a, next: { ...a, count: 1 } },
        { expected: { ...b, count: 5 }, next: { ...b, count: 6 } },
      ]);
      assert.deepEqual(results, [true, false]);
      assert.equal((await store.schedules.getSchedule('a'))?.count, 1);
      assert.equal((await store.schedules.getSchedule('b'))?.count, 0);
      assert.deepEqual(await store.schedules.swapSchedules([]), []);
    });

    it('moves schedulesVersion with every change another reader must re-read, not with moves forward', async () => {
      const changed = async (what: string, change: () => Promise<unknown>, expected = true): Promise<void> => {
        const before = await store.schedules.schedulesVersion();
        await change();
        const after = await store.schedules.schedulesVersion();
        assert.equal(after !== before, expected, `${what}: ${before} -> ${after}`);
      };
      const a = scheduleRecord('a');
      const b = scheduleRecord('b');
      const c = scheduleRecord('c');
      await changed('putSchedule', () => store.schedules.putSchedule(a));
      await changed('putSchedules', () => store.schedules.putSchedules([b, c]));
      const moved = { ...a, nextAt: T0 + 120_000, lastAt: T0 + 60_000, count: 1, updatedAt: T0 + 1 };
      await changed('a swap moving a schedule forward', () => store.schedules.swapSchedule(a, moved), false);
      await changed('a failed swap', () => store.schedules.swapSchedule(a, { ...a, rev: 9 }), false);
      const redefined = { ...moved, rev: moved.rev + 1, everyMs: 5_000 };
      await changed('a swap to a new rev', () => store.schedules.swapSchedule(moved, redefined));
      const paused = { ...redefined, paused: true };
      await changed('a swap pausing', () => store.schedules.swapSchedules([{ expected: redefined, next: paused }]));
      // A call mixing both kinds answers in input order and counts the change.
      const bMoved = { ...b, count: 1 };
      await changed('swaps of both kinds', async () => {
        const stale = { ...c, count: 3 };
        assert.deepEqual(await store.schedules.swapSchedules([{ expected: b, next: bMoved }, { expected: paused, next: { ...paused, paused: false } }, { expected: stale, next: { ...stale, rev: 2 } }]), [true, true, false]);
      });
      assert.equal((await store.schedules.getSchedule('b'))?.count, 1);
      assert.equal((await store.schedules.getSchedule('a'))?.paused, false);
      await changed('deleteSchedule', () => store.schedules.deleteSchedule('b'));
      assert.equal(await store.schedules.getSchedule('b'), null);
    });

    it('concurrent swaps from one record: exactly one wins', async () => {
      const v1 = scheduleRecord('s');
      await store.schedules.putSchedule(v1);
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.schedules.swapSchedule(v1, { ...v1, count: i + 1 })));
      assert.equal(results.filter(Boolean).length, 1);
    });

    it('are not tasks, and calls after close reject', async () => {
      await store.schedules.putSchedule(scheduleRecord('s'));
      assert.deepEqual(await store.tasks.list({ limit: 10 }), []);
      await store.close();
      await assert.rejects(() => store.schedules.putSchedule(scheduleRecord('s')));
      await assert.rejects(() => store.schedules.listSchedules());
      await assert.rejects(() => store.schedules.swapSchedule(scheduleRecord('s'), scheduleRecord('s')));
    });
  });
}
