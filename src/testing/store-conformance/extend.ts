/** The store suite's cases of extending reservations (runStoreConformance, ./index.ts; core/task/decide.ts decideExtend). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ExtendOutcome, TaskStore } from '../../core/ports/index.js';
import type { NewTaskRecord } from '../../core/task/model.js';
import { T0, loadAll, task } from './fixtures.js';

const STALE: ExtendOutcome = { status: 'stale' };
const NOT_FOUND: ExtendOutcome = { status: 'not_found' };

/** `store` is the store of the case running: a fresh one for each. */
export function extendCases(store: TaskStore): void {
  describe('extend reservations', () => {
    /** Schedules `id` due at T0 and reserves it at T0 (ttr 5 s unless given): its receipt. */
    async function reserved(id: string, overrides: Partial<NewTaskRecord> = {}): Promise<string> {
      await store.tasks.schedule([task(id, { runAt: T0, ...overrides })], T0 - 10);
      const [record] = await store.tasks.reserve([id], T0);
      assert.ok(record?.receipt, `${id} reserved`);
      return record.receipt;
    }

    it('moves a reservation in force to now + ttrMs, its ttr timer with it, and leaves the attempt as it was', async () => {
      const receipt = await reserved('a');
      assert.deepEqual(await store.tasks.extend([{ id: 'a', receipt, ttrMs: 10_000 }], T0 + 1_000), [{ status: 'extended', reservedUntil: T0 + 11_000 }]);
      const a = await store.tasks.get('a');
      assert.deepEqual([a?.state, a?.receipt, a?.attempts, a?.reservedUntil, a?.updatedAt], ['reserved', receipt, 1, T0 + 11_000, T0], 'same receipt and attempt; updatedAt is still the attempt\'s start');
      const timers = (await loadAll(store, T0 + 60_000)).filter((ref) => ref.id === 'a');
      assert.deepEqual(
        timers.map((ref) => [ref.kind, ref.dueAt, ref.receipt]),
        [['ttr', T0 + 11_000, receipt]],
        'its ttr timer is read at the new end only',
      );
      // Without ttrMs: the task's own (5 s); a shorter one than before is allowed.
      assert.deepEqual(await store.tasks.extend([{ id: 'a', receipt }], T0 + 2_000), [{ status: 'extended', reservedUntil: T0 + 7_000 }]);
      assert.equal((await store.tasks.get('a'))?.reservedUntil, T0 + 7_000);
      assert.deepEqual(await store.tasks.ack('a', receipt, T0 + 6_000), { status: 'acked', topic: 'orders' }, 'the receipt still acks');
      assert.deepEqual((await store.tasks.get('a'))?.history.map((e) => [e.startedAt, e.durationMs, e.outcome]), [[T0, 6_000, 'acked']], 'the attempt ran from its reservation to the ack');
    });

    it('answers an expiry before the new end as held, with the ttr timer to place, and expires it at the new end', async () => {
      const receipt = await reserved('a');
      await store.tasks.extend([{ id: 'a', receipt, ttrMs: 10_000 }], T0 + 4_000);
      const held = await store.tasks.expire('a', receipt, T0 + 5_000);
      assert.equal(held.status, 'held');
      if (held.status !== 'held') return;
      assert.deepEqual([held.ref.id, held.ref.topic, held.ref.kind, held.ref.dueAt, held.ref.receipt], ['a', 'orders', 'ttr', T0 + 14_000, receipt]);
      assert.equal((await store.tasks.get('a'))?.state, 'reserved', 'a held expiry changes nothing');
      const expired = await store.tasks.expire('a', receipt, T0 + 14_000);
      assert.equal(expired.status, 'retrying');
      assert.deepEqual((await store.tasks.get('a'))?.history.map((e) => [e.startedAt, e.durationMs, e.outcome]), [[T0, 14_000, 'expired']]);
    });

    it('refuses a stale receipt, a settled reservation and one that ran out, and never revives it', async () => {
      const receipt = await reserved('a', { maxAttempts: 3 });
      assert.deepEqual(await store.tasks.extend([{ id: 'a', receipt: `${receipt}x`, ttrMs: 10_000 }], T0 + 1), [STALE]);
      assert.deepEqual(await store.tasks.extend([{ id: 'missing', receipt, ttrMs: 10_000 }], T0 + 1), [NOT_FOUND]);
      // Ran out at T0 + 5 s, nobody expired it yet: lost all the same (another process may be expiring it now).
      assert.deepEqual(await store.tasks.extend([{ id: 'a', receipt, ttrMs: 10_000 }], T0 + 5_000), [STALE]);
      const a = await store.tasks.get('a');
      assert.deepEqual([a?.state, a?.reservedUntil], ['reserved', T0 + 5_000], 'not revived');
      assert.equal((await store.tasks.expire('a', receipt, T0 + 5_000)).status, 'retrying');
      assert.deepEqual(await store.tasks.extend([{ id: 'a', receipt, ttrMs: 10_000 }], T0 + 5_001), [STALE], 'pending again: nothing to extend');
      const [second] = await store.tasks.reserve(['a'], T0 + 5_001);
      assert.deepEqual(await store.tasks.extend([{ id: 'a', receipt, ttrMs: 10_000 }], T0 + 5_002), [STALE], 'the first attempt\'s receipt extends nothing of the second');
      assert.equal((await store.tasks.get('a'))?.reservedUntil, T0 + 10_001);
      assert.deepEqual(await store.tasks.ack('a', second!.receipt!, T0 + 5_003), { status: 'acked', topic: 'orders' });
      assert.deepEqual(await store.tasks.extend([{ id: 'a', receipt: second!.receipt!, ttrMs: 10_000 }], T0 + 5_004), [STALE], 'acked: nothing to extend');
      const dead = await reserved('d', { maxAttempts: 1 });
      await store.tasks.nack({ id: 'd', receipt: dead, now: T0 + 1, random: 0 });
      assert.deepEqual(await store.tasks.extend([{ id: 'd', receipt: dead }], T0 + 2), [STALE]);
      assert.equal((await store.tasks.get('d'))?.state, 'dead');
    });

    it('answers a batch in input order, each as it would alone, across topics and beyond one script call', async () => {
      const ids = Array.from({ length: 620 }, (_, i) => `b${String(i).padStart(3, '0')}`);
      await store.tasks.schedule(ids.map((id, i) => task(id, { runAt: T0, topic: i % 2 === 0 ? 'orders' : 'mail' })), T0 - 10);
      const records = await store.tasks.reserve(ids, T0);
      assert.equal(records.length, ids.length);
      const receiptOf = new Map(records.map((r) => [r.id, r.receipt!]));
      await store.tasks.ack('b001', receiptOf.get('b001')!, T0 + 1);
      const requests = [
        ...ids.map((id, i) => ({ id, receipt: i === 2 ? 'nope' : receiptOf.get(id)!, ttrMs: 1_000 + i })),
        { id: 'missing', receipt: 'x' },
      ];
      const outcomes = await store.tasks.extend(requests, T0 + 100);
      assert.equal(outcomes.length, requests.length);
      assert.deepEqual(outcomes[0], { status: 'extended', reservedUntil: T0 + 1_100 });
      assert.deepEqual(outcomes[1], STALE, 'acked');
      assert.deepEqual(outcomes[2], STALE, 'a wrong receipt');
      assert.deepEqual(outcomes[619], { status: 'extended', reservedUntil: T0 + 100 + 1_000 + 619 });
      assert.deepEqual(outcomes[620], NOT_FOUND);
      assert.equal(outcomes.filter((o) => o.status === 'extended').length, 618);
      assert.equal((await store.tasks.get('b619'))?.reservedUntil, T0 + 1_719);
      assert.equal((await store.tasks.get('b002'))?.reservedUntil, T0 + 5_000, 'a refused one is left as it was');
      assert.deepEqual(await store.tasks.extend([], T0 + 200), []);
    });
  });
}
