/** The store suite's cases of "ack, fail and expire" (runStoreConformance, ./index.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoreAckOutcome, TaskStore } from '../../core/ports/index.js';
import { type NewTaskRecord } from '../../core/task/model.js';
import { T0, task, loadAll } from './fixtures.js';

const ACKED: StoreAckOutcome = { status: 'acked', topic: 'orders' };
const ALREADY_ACKED: StoreAckOutcome = { status: 'already_acked' };
const STALE: StoreAckOutcome = { status: 'stale' };
const NOT_FOUND: StoreAckOutcome = { status: 'not_found' };

/** `store` is the store of the case running: a fresh one for each. */
export function settleCases(store: TaskStore): void {
  describe('ack, fail and expire', () => {
    async function reserved(id: string, overrides: Partial<NewTaskRecord> = {}, at = T0): Promise<string> {
      await store.tasks.schedule([task(id, { runAt: at, ...overrides })], at);
      const [record] = await store.tasks.reserve([id], at);
      assert.ok(record?.receipt);
      return record.receipt;
    }

    it('acks with the current receipt only', async () => {
      const receipt = await reserved('a');
      assert.deepEqual(await store.tasks.ack('a', `${receipt}x`, T0 + 1), STALE);
      assert.deepEqual(await store.tasks.ack('a', receipt, T0 + 2), { status: 'acked', topic: 'orders' }, 'answered with the task\'s own topic');
      const a = await store.tasks.get('a');
      assert.equal(a?.state, 'completed');
      assert.equal(a?.updatedAt, T0 + 2);
      assert.deepEqual([a?.receipt, a?.reservedUntil, a?.attempts, a?.runAt, a?.payload], [null, null, 1, T0, task('a').payload], 'the reservation is gone, the rest kept');
      assert.deepEqual(await store.tasks.ack('missing', receipt, T0), NOT_FOUND);
    });

    it('answers each ack with the topic of the task it completed, whatever the topic', async () => {
      const receipts = [await reserved('m', { topic: 'mail' }), await reserved('p', { topic: 'payments.eu-1' })];
      assert.deepEqual(await store.tasks.ack('m', receipts[0]!, T0 + 1), { status: 'acked', topic: 'mail' });
      const q = await reserved('q', { topic: 'payments.eu-1' });
      assert.deepEqual(
        await store.tasks.ackMany([{ id: 'p', receipt: receipts[1]! }, { id: 'q', receipt: q }], T0 + 2),
        [{ status: 'acked', topic: 'payments.eu-1' }, { status: 'acked', topic: 'payments.eu-1' }],
      );
    });

    it('answers an ack sent again with the receipt that completed the task as already acked, and changes nothing', async () => {
      const receipt = await reserved('a');
      assert.deepEqual(await store.tasks.ack('a', receipt, T0 + 2), ACKED);
      // The reply was lost and the client sends the same ack again: it did succeed, but it
      // is not a second completion (the engine counts acks by the `acked` answers).
      assert.deepEqual(await store.tasks.ack('a', receipt, T0 + 30), ALREADY_ACKED);
      assert.deepEqual(await store.tasks.ackMany([{ id: 'a', receipt }], T0 + 31), [ALREADY_ACKED]);
      const a = await store.tasks.get('a');
      assert.deepEqual([a?.state, a?.updatedAt, a?.receipt, a?.reservedUntil], ['completed', T0 + 2, null, null], 'untouched by the repeats');
      assert.equal((await store.tasks.stats()).byState.completed, 1, 'counted once');
      // Any other receipt is still stale: a malformed one, or one of another attempt.
      assert.deepEqual(await store.tasks.ack('a', `${receipt}x`, T0 + 32), STALE);
      const first = await reserved('b', { maxAttempts: 3 });
      await store.tasks.nack({ id: 'b', receipt: first, now: T0 + 1, delayMs: 0, random: 0 });
      const [second] = await store.tasks.reserve(['b'], T0 + 1);
      assert.deepEqual(await store.tasks.ack('b', second!.receipt!, T0 + 2), ACKED);
      assert.deepEqual(await store.tasks.ack('b', first, T0 + 3), STALE, 'the failed attempt never completed it');
      assert.deepEqual(await store.tasks.ack('b', second!.receipt!, T0 + 4), ALREADY_ACKED);
      // A failed or expired attempt is not an ack: its receipt acks nothing afterwards.
      const dead = await reserved('c', { maxAttempts: 1 });
      assert.deepEqual(await store.tasks.nack({ id: 'c', receipt: dead, now: T0 + 1, random: 0 }), { status: 'dead', topic: 'orders' });
      assert.deepEqual(await store.tasks.ack('c', dead, T0 + 2), STALE);
      // Once purged, the task and its receipt are gone.
      assert.equal(await store.tasks.purge(T0 + 10, 100), 2);
      assert.deepEqual(await store.tasks.ack('a', receipt, T0 + 40), NOT_FOUND);
    });

    it('reserves through its own refs as through their ids', async () => {
      const [a, b, c, d] = await store.tasks.schedule(
        [task('a', { runAt: T0 }), task('b', { runAt: T0 + 50 }), task('c', { runAt: T0 }), task('d', { runAt: T0 })],
        T0 - 10,
      );
      await store.tasks.cancel('c', T0 - 5);
      const refs = [a!.ref!, b!.ref!, c!.ref!, d!.ref!, a!.ref!];
      const claimed = await store.tasks.reserveRefs(refs, T0, 5_000);
      assert.deepEqual(
        claimed.map((r) => r.id),
        ['a', 'd'],
        'due and pending only: not b (later), not c (cancelled), not a twice',
      );
      assert.equal(claimed[0]!.reservedUntil, T0 + 5_000);
      assert.equal((await store.tasks.get('a'))?.state, 'reserved');
      assert.equal((await store.tasks.get('a'))?.receipt, claimed[0]!.receipt);
      assert.deepEqual(await store.tasks.reserveRefs([b!.ref!], T0 + 49), [], 'never before runAt');
      assert.equal((await store.tasks.reserveRefs([b!.ref!], T0 + 50))[0]?.id, 'b');
    });

    it('acks several deliveries in one call, each as ack would alone', async () => {
      const a = await reserved('a');
      const b = await reserved('b');
      const c = await reserved('c');
      const outcomes = await store.tasks.ackMany(
        [
          { id: 'a', receipt: a },
          { id: 'b', receipt: `${b}x` },
          { id: 'missing', receipt: a },
          { id: 'c', receipt: c },
          { id: 'a', receipt: a },
          { id: 'c', receipt: `${c}x` },
        ],
        T0 + 5,
      );
      // 'a' twice with its receipt: the second is the same ack again, already acked (counted once).
      assert.deepEqual(outcomes, [ACKED, STALE, NOT_FOUND, ACKED, ALREADY_ACKED, STALE]);
      assert.equal((await store.tasks.get('a'))?.state, 'completed');
      assert.equal((await store.tasks.get('a'))?.updatedAt, T0 + 5);
      assert.equal((await store.tasks.get('b'))?.state, 'reserved');
      assert.equal((await store.tasks.get('c'))?.state, 'completed');
      assert.deepEqual(await store.tasks.ackMany([], T0 + 6), []);
      const stats = await store.tasks.stats();
      assert.equal(stats.byState.completed, 2);
      assert.equal(stats.byState.reserved, 1);
    });

    it('retries a failed attempt after its backoff, with the error recorded', async () => {
      const receipt = await reserved('a', { backoff: { baseMs: 1_000, factor: 2, maxMs: 60_000, jitter: 0 } });
      const outcome = await store.tasks.nack({ id: 'a', receipt, now: T0 + 10, error: 'boom', random: 0.5 });
      assert.equal(outcome.status, 'retrying');
      assert.equal(outcome.status === 'retrying' && outcome.ref.dueAt, T0 + 10 + 1_000);
      const a = await store.tasks.get('a');
      assert.equal(a?.state, 'pending');
      assert.equal(a?.runAt, T0 + 1_010);
      assert.equal(a?.attempts, 1);
      assert.equal(a?.lastError, 'boom');
      assert.equal(a?.receipt, null);
      const [second] = await store.tasks.reserve(['a'], T0 + 1_010);
      assert.equal(second?.attempts, 2);
      const again = await store.tasks.nack({ id: 'a', receipt: second.receipt!, now: T0 + 1_020, random: 0 });
      assert.equal(again.status === 'retrying' && again.ref.dueAt, T0 + 1_020 + 2_000);
    });

    it('honours an explicit retry delay', async () => {
      const receipt = await reserved('a');
      const outcome = await store.tasks.nack({ id: 'a', receipt, now: T0 + 5, delayMs: 42, random: 0 });
      assert.equal(outcome.status === 'retrying' && outcome.ref.dueAt, T0 + 47);
      assert.equal(outcome.status === 'retrying' && outcome.topic, 'orders', 'with the task\'s topic');
    });

    it('buries a task that fails its last attempt, and retryDead brings it back', async () => {
      const receipt = await reserved('a', { maxAttempts: 1, topic: 'mail' });
      assert.deepEqual(await store.tasks.nack({ id: 'a', receipt, now: T0 + 1, error: 'final', random: 0 }), { status: 'dead', topic: 'mail' }, 'with the task\'s topic');
      const dead = await store.tasks.get('a');
      assert.equal(dead?.state, 'dead');
      assert.equal(dead?.lastError, 'final');
      assert.deepEqual(await loadAll(store, Number.POSITIVE_INFINITY), []);
      assert.deepEqual(await store.tasks.reserve(['a'], T0 + 10_000), []);
      const retried = await store.tasks.retryDead('a', T0 + 20, T0 + 10);
      assert.equal(retried.status, 'retried');
      const back = await store.tasks.get('a');
      assert.equal(back?.state, 'pending');
      assert.equal(back?.attempts, 0);
      assert.equal(back?.runAt, T0 + 20);
      assert.equal((await store.tasks.retryDead('a', T0, T0)).status, 'not_dead');
      assert.equal((await store.tasks.retryDead('missing', T0, T0)).status, 'not_found');
    });

    it('refuses fail with a stale receipt and leaves the task alone', async () => {
      const receipt = await reserved('a');
      assert.deepEqual(await store.tasks.nack({ id: 'a', receipt: 'nope', now: T0 + 1, random: 0 }), { status: 'stale' });
      assert.equal((await store.tasks.get('a'))?.state, 'reserved');
      assert.deepEqual(await store.tasks.nack({ id: 'missing', receipt, now: T0 + 1, random: 0 }), { status: 'not_found' });
    });

    it('expires a reservation only once it has run out, and redelivers at once', async () => {
      const receipt = await reserved('a');
      // Not run out yet (a timer that fired early): held, with its timer at the reservation's end.
      const early = await store.tasks.expire('a', receipt, T0 + 4_999);
      assert.deepEqual(early.status === 'held' && [early.ref.kind, early.ref.dueAt, early.ref.receipt], ['ttr', T0 + 5_000, receipt]);
      const outcome = await store.tasks.expire('a', receipt, T0 + 5_000);
      assert.equal(outcome.status, 'retrying');
      assert.equal(outcome.status === 'retrying' && outcome.topic, 'orders');
      assert.equal(outcome.status === 'retrying' && outcome.ref.dueAt, T0 + 5_000);
      const [second] = await store.tasks.reserve(['a'], T0 + 5_000);
      assert.equal(second?.attempts, 2);
      assert.notEqual(second?.receipt, receipt);
      // The first, slow attempt can no longer settle the task.
      assert.deepEqual(await store.tasks.ack('a', receipt, T0 + 5_001), STALE);
      assert.deepEqual(await store.tasks.expire('a', receipt, T0 + 99_999), { status: 'stale' });
      assert.deepEqual(await store.tasks.ack('a', second.receipt!, T0 + 5_002), ACKED);
    });

    it('buries a task whose last reservation expires', async () => {
      const receipt = await reserved('a', { maxAttempts: 1, topic: 'mail' });
      assert.deepEqual(await store.tasks.expire('a', receipt, T0 + 5_000), { status: 'dead', topic: 'mail' });
      assert.equal((await store.tasks.get('a'))?.state, 'dead');
    });
  });
}
