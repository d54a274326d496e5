/**
 * The store contract, as tests. Every store (memory, SQLite, Redis, Redis Cluster) runs
 * this suite unchanged by calling `runStoreConformance` with a factory:
 *
 *   runStoreConformance('memory', async () => ({ store: new MemoryStore() }));
 *
 * The factory returns a fresh, empty store each time (and a cleanup to drop it). Times
 * are passed in, never read from a clock, so every case is deterministic.
 */
import assert from 'node:assert/strict';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import type { TaskStore } from '../../src/core/ports/index.js';
import type { PushSubscription } from '../../src/core/push.js';
import type { ScheduleRecord } from '../../src/core/schedule/model.js';
import { DEFAULT_BACKOFF } from '../../src/core/task/backoff.js';
import { PUSH_LANE, type NewTaskRecord, type TimerRef } from '../../src/core/task/model.js';

export interface StoreUnderTest {
  readonly store: TaskStore;
  /** Drops the store's data and connections. Default: store.close(). */
  readonly cleanup?: () => Promise<void>;
}

export type StoreFactory = () => Promise<StoreUnderTest>;

export const T0 = Date.UTC(2030, 0, 1);

export function task(id: string, overrides: Partial<NewTaskRecord> = {}): NewTaskRecord {
  return {
    id,
    topic: 'orders',
    payload: JSON.stringify({ id, n: 1 }),
    runAt: T0 + 1_000,
    maxAttempts: 3,
    ttrMs: 5_000,
    backoff: { ...DEFAULT_BACKOFF, jitter: 0 },
    ...overrides,
  };
}

/** A push subscription of `topic` with every field set (secrets are `whsec_` + base64 of 32 bytes). */
export function pushSubscription(topic: string, overrides: Partial<PushSubscription> = {}): PushSubscription {
  return {
    topic,
    url: 'https://hooks.example.com/delayq',
    secrets: [{ secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`, expiresAt: null }],
    timeoutMs: 10_000,
    concurrency: 16,
    headers: { 'x-tenant': 'acme' },
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

/** A recurring schedule `id` with every field set. */
export function scheduleRecord(id: string, overrides: Partial<ScheduleRecord> = {}): ScheduleRecord {
  return {
    id, topic: 'reports', payload: '{"kind":"daily"}', cron: '30 2 * * *', tz: 'Europe/Berlin', everyMs: null,
    startAt: T0, endAt: null, limit: 10, misfire: 'once', ttrMs: 5_000, maxAttempts: 3,
    backoff: { baseMs: 100, factor: 2, maxMs: 1_000, jitter: 0.5 },
    paused: false, nextAt: T0 + 60_000, lastAt: null, count: 0, rev: 1, createdAt: T0, updatedAt: T0, url: null,
    ...overrides,
  };
}

async function loadAll(store: TaskStore, until: number, pageSize = 1_000): Promise<TimerRef[]> {
  const out: TimerRef[] = [];
  let after: { dueAt: number; seq: number } | null = null;
  for (;;) {
    const page = await store.loadDue(until, after, pageSize);
    out.push(...page);
    if (page.length < pageSize) return out;
    const last = page[page.length - 1]!;
    after = { dueAt: last.dueAt, seq: last.seq };
  }
}

/** `refs` hold `count` distinct tasks, ordered by (dueAt, seq). */
function assertEachOnceInOrder(refs: readonly TimerRef[], count: number): void {
  assert.equal(refs.length, count);
  assert.equal(new Set(refs.map((r) => r.id)).size, count);
  for (let i = 1; i < refs.length; i++) {
    const a = refs[i - 1]!;
    const b = refs[i]!;
    assert.ok(a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.seq < b.seq), 'ordered by (dueAt, seq)');
  }
}

export function runStoreConformance(name: string, factory: StoreFactory): void {
  describe(`store conformance: ${name}`, () => {
    let store: TaskStore;
    const cleanups: (() => Promise<void>)[] = [];

    beforeEach(async () => {
      const opened = await factory();
      store = opened.store;
      // Closes this store, not whatever `store` names by then: a test that skips itself
      // gets no afterEach (node 20), so its cleanup runs after the next test's beforeEach.
      cleanups.push(opened.cleanup ?? (() => opened.store.close()));
    });

    afterEach(async () => {
      while (cleanups.length > 0) await cleanups.pop()!();
    });

    after(async () => {
      while (cleanups.length > 0) await cleanups.pop()!();
    });

    describe('schedule', () => {
      it('creates pending tasks and reports each in input order', async () => {
        const outcomes = await store.schedule([task('a'), task('b', { runAt: T0 + 500 })], T0);
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
        const a = await store.get('a');
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
        await store.schedule([task('a')], T0);
        const [again] = await store.schedule([task('a', { runAt: T0 + 9_999, topic: 'other', payload: '"x"' })], T0 + 1);
        assert.deepEqual([again!.id, again!.runAt, again!.created, again!.ref], ['a', T0 + 1_000, false, null]);
        const a = await store.get('a');
        assert.equal(a?.topic, 'orders');
        assert.equal(a?.runAt, T0 + 1_000);
      });

      it('answers an id already pending on the same topic with no timer or with its own (a retried call)', async () => {
        await store.schedule([task('r')], T0);
        const [again] = await store.schedule([task('r', { runAt: T0 + 5_000 })], T0 + 1);
        assert.deepEqual([again!.created, again!.runAt], [false, T0 + 1_000]);
        // The Redis store gives it, so that a task whose first call's reply was lost still fires.
        if (again!.ref !== null) assert.deepEqual([again!.ref.id, again!.ref.topic, again!.ref.kind, again!.ref.dueAt], ['r', 'orders', 'run', T0 + 1_000]);
        assert.equal((await store.get('r'))?.runAt, T0 + 1_000);
      });

      it('keeps the first of ids repeated within one call', async () => {
        const outcomes = await store.schedule([task('dup', { runAt: T0 + 1 }), task('dup', { runAt: T0 + 2 })], T0);
        assert.deepEqual(
          outcomes.map((o) => [o.created, o.runAt]),
          [
            [true, T0 + 1],
            [false, T0 + 1],
          ],
        );
        assert.equal((await store.get('dup'))?.runAt, T0 + 1);
      });

      it('stores payloads exactly, including unicode and large ones', async () => {
        const big = JSON.stringify({ s: 'x'.repeat(200_000), u: 'ünïcødé ✓ 😀' });
        await store.schedule([task('big', { payload: big })], T0);
        assert.equal((await store.get('big'))?.payload, big);
      });

      it('returns null for unknown ids', async () => {
        assert.equal(await store.get('nope'), null);
      });
    });

    describe('cancel and reschedule', () => {
      it('cancels a pending task once', async () => {
        await store.schedule([task('a')], T0);
        assert.equal(await store.cancel('a', T0 + 1), 'cancelled');
        assert.equal((await store.get('a'))?.state, 'cancelled');
        assert.equal(await store.cancel('a', T0 + 2), 'not_pending');
        assert.equal(await store.cancel('missing', T0), 'not_found');
        assert.deepEqual(await loadAll(store, T0 + 10_000), []);
      });

      it('cancels many ids in one call, each as cancel would alone', async () => {
        const many = Array.from({ length: 1_200 }, (_, i) => task(`c${i}`, { runAt: T0 + 1_000 + i }));
        await store.schedule([...many, task('taken', { runAt: T0 }), task('far', { runAt: T0 + 3 * 24 * 3_600_000 })], T0);
        await store.reserve(['taken'], T0, undefined);
        const victims = [...many.filter((_, i) => i % 2 === 0).map((x) => x.id), 'taken', 'missing', 'c0', 'far'];
        const outcomes = await store.cancelMany(victims, T0 + 1);
        assert.equal(outcomes.length, victims.length);
        assert.ok(outcomes.slice(0, 600).every((o) => o === 'cancelled'));
        assert.deepEqual(outcomes.slice(600), ['not_pending', 'not_found', 'not_pending', 'cancelled'], 'reserved, unknown, repeated, far');
        const c0 = await store.get('c0');
        assert.equal(c0?.state, 'cancelled');
        assert.equal(c0?.updatedAt, T0 + 1, 'a cancel stamps updatedAt');
        assert.equal(c0?.payload, many[0]!.payload, 'and keeps the payload');
        assert.equal((await store.get('c1'))?.state, 'pending');
        assert.equal((await store.get('taken'))?.state, 'reserved');
        const left = await loadAll(store, T0 + 4 * 24 * 3_600_000);
        assert.deepEqual(
          left.filter((r) => r.kind === 'run').map((r) => r.id),
          many.filter((_, i) => i % 2 === 1).map((x) => x.id),
        );
        const stats = await store.stats();
        assert.equal(stats.byState.cancelled, 601);
        assert.equal(stats.byState.pending, 600);
        assert.deepEqual(await store.cancelMany([], T0 + 2), []);
      });

      it('refuses to cancel a reserved task', async () => {
        await store.schedule([task('a', { runAt: T0 })], T0);
        await store.reserve(['a'], T0, undefined);
        assert.equal(await store.cancel('a', T0 + 1), 'not_pending');
        assert.equal((await store.get('a'))?.state, 'reserved');
      });

      it('moves a pending task later and earlier', async () => {
        await store.schedule([task('a')], T0);
        const later = await store.reschedule('a', T0 + 30_000, T0 + 1);
        assert.equal(later.status, 'rescheduled');
        assert.equal(later.status === 'rescheduled' && later.ref.dueAt, T0 + 30_000);
        assert.equal((await store.get('a'))?.runAt, T0 + 30_000);
        const earlier = await store.reschedule('a', T0 + 10, T0 + 2);
        assert.equal(earlier.status === 'rescheduled' && earlier.ref.dueAt, T0 + 10);
        assert.deepEqual(
          (await loadAll(store, T0 + 100_000)).map((r) => [r.id, r.dueAt]),
          [['a', T0 + 10]],
        );
      });

      it('refuses to reschedule what is not pending', async () => {
        assert.equal((await store.reschedule('missing', T0, T0)).status, 'not_found');
        await store.schedule([task('a')], T0);
        await store.cancel('a', T0);
        assert.equal((await store.reschedule('a', T0 + 5, T0)).status, 'not_pending');
      });
    });

    describe('loadDue', () => {
      it('returns pending timers before `until` in (dueAt, insertion) order, paged', async () => {
        const tasks = [
          task('t3', { runAt: T0 + 300 }),
          task('t1', { runAt: T0 + 100 }),
          task('t2a', { runAt: T0 + 200 }),
          task('t2b', { runAt: T0 + 200 }),
          task('t9', { runAt: T0 + 900 }),
        ];
        await store.schedule(tasks, T0);
        await store.schedule([task('t2c', { runAt: T0 + 200 })], T0);
        const refs = await loadAll(store, T0 + 900, 2);
        assert.deepEqual(
          refs.map((r) => r.id),
          ['t1', 't2a', 't2b', 't2c', 't3'],
        );
        assert.ok(refs.every((r) => r.kind === 'run' && r.receipt === null));
        assert.deepEqual(await store.loadDue(T0 + 100, null, 10), []);
      });

      it('includes reservations as ttr timers and excludes finished tasks', async () => {
        await store.schedule([task('run', { runAt: T0 + 50 }), task('res', { runAt: T0 }), task('done', { runAt: T0 }), task('gone', { runAt: T0 })], T0);
        const claimed = await store.reserve(['res', 'done'], T0, 1_000);
        const done = claimed.find((r) => r.id === 'done')!;
        assert.equal(await store.ack('done', done.receipt!, T0 + 1), 'acked');
        await store.cancel('gone', T0);
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
        await store.schedule(many, T0);
        const refs = await loadAll(store, T0 + 1_000, 333);
        assertEachOnceInOrder(refs, 2_500);
      });

      it('loads far-future tasks once their time comes near: in order, cancelled ones never, moved ones at their new time', async () => {
        const HOUR = 3_600_000;
        const DAY = 24 * HOUR;
        await store.schedule(
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
        await store.schedule([task('f4', { runAt: T0 + 3 * HOUR })], T0 + 1);
        assert.deepEqual(
          (await loadAll(store, T0 + 60_000)).map((r) => r.id),
          ['near'],
        );
        assert.equal(await store.cancel('cancelled', T0 + 2), 'cancelled');
        assert.equal((await store.reschedule('nearer', T0 + HOUR, T0 + 2)).status, 'rescheduled');
        assert.equal((await store.reschedule('later', T0 + 4 * DAY + 1, T0 + 2)).status, 'rescheduled');
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
        await store.schedule(many, T0);
        const refs = await loadAll(store, T0 + 5 * DAY, 400);
        assertEachOnceInOrder(refs, 1_500);
      });

      it('accepts an unbounded window', async () => {
        await store.schedule([task('far', { runAt: T0 + 10 * 365 * 24 * 3600 * 1000 })], T0);
        const refs = await store.loadDue(Number.POSITIVE_INFINITY, null, 10);
        assert.deepEqual(
          refs.map((r) => r.id),
          ['far'],
        );
      });
    });

    describe('reserve', () => {
      it('reserves due pending tasks with a receipt, never one before its runAt', async () => {
        await store.schedule([task('due', { runAt: T0 + 100 }), task('later', { runAt: T0 + 101 })], T0);
        assert.deepEqual(await store.reserve(['due'], T0 + 99), []);
        const claimed = await store.reserve(['due', 'later', 'missing'], T0 + 100);
        assert.equal(claimed.length, 1);
        const due = claimed[0]!;
        assert.equal(due.id, 'due');
        assert.equal((await store.get('due'))?.state, 'reserved');
        assert.equal(due.attempts, 1);
        assert.equal(due.reservedUntil, T0 + 100 + 5_000);
        assert.equal(typeof due.receipt, 'string');
        assert.ok(due.receipt!.length > 0);
        assert.deepEqual(JSON.parse(due.payload), { id: 'due', n: 1 });
        assert.equal((await store.get('later'))?.state, 'pending');
      });

      it('reserves a task only once, and honours a ttr override', async () => {
        await store.schedule([task('a', { runAt: T0 })], T0);
        const [first] = await store.reserve(['a'], T0, 250);
        assert.equal(first?.reservedUntil, T0 + 250);
        assert.deepEqual(await store.reserve(['a'], T0 + 1), []);
      });

      it('returns reserved records in input order', async () => {
        await store.schedule([task('x', { runAt: T0 }), task('y', { runAt: T0 }), task('z', { runAt: T0 })], T0);
        const claimed = await store.reserve(['z', 'x', 'y'], T0);
        assert.deepEqual(
          claimed.map((r) => r.id),
          ['z', 'x', 'y'],
        );
        assert.equal(new Set(claimed.map((r) => r.receipt)).size, 3);
      });
    });

    describe('ack, fail and expire', () => {
      async function reserved(id: string, overrides: Partial<NewTaskRecord> = {}, at = T0): Promise<string> {
        await store.schedule([task(id, { runAt: at, ...overrides })], at);
        const [record] = await store.reserve([id], at);
        assert.ok(record?.receipt);
        return record.receipt;
      }

      it('acks with the current receipt only', async () => {
        const receipt = await reserved('a');
        assert.equal(await store.ack('a', `${receipt}x`, T0 + 1), 'stale');
        assert.equal(await store.ack('a', receipt, T0 + 2), 'acked');
        const a = await store.get('a');
        assert.equal(a?.state, 'completed');
        assert.equal(a?.updatedAt, T0 + 2);
        assert.deepEqual([a?.receipt, a?.reservedUntil, a?.attempts, a?.runAt, a?.payload], [null, null, 1, T0, task('a').payload], 'the reservation is gone, the rest kept');
        assert.equal(await store.ack('missing', receipt, T0), 'not_found');
      });

      it('answers an ack sent again with the receipt that completed the task as acked, and changes nothing', async () => {
        const receipt = await reserved('a');
        assert.equal(await store.ack('a', receipt, T0 + 2), 'acked');
        // The reply was lost and the client sends the same ack again: it did succeed.
        assert.equal(await store.ack('a', receipt, T0 + 30), 'acked');
        assert.deepEqual(await store.ackMany([{ id: 'a', receipt }], T0 + 31), ['acked']);
        const a = await store.get('a');
        assert.deepEqual([a?.state, a?.updatedAt, a?.receipt, a?.reservedUntil], ['completed', T0 + 2, null, null], 'untouched by the repeats');
        assert.equal((await store.stats()).byState.completed, 1, 'counted once');
        // Any other receipt is still stale: a malformed one, or one of another attempt.
        assert.equal(await store.ack('a', `${receipt}x`, T0 + 32), 'stale');
        const first = await reserved('b', { maxAttempts: 3 });
        await store.nack('b', first, T0 + 1, { delayMs: 0, random: 0 });
        const [second] = await store.reserve(['b'], T0 + 1);
        assert.equal(await store.ack('b', second!.receipt!, T0 + 2), 'acked');
        assert.equal(await store.ack('b', first, T0 + 3), 'stale', 'the failed attempt never completed it');
        assert.equal(await store.ack('b', second!.receipt!, T0 + 4), 'acked');
        // A failed or expired attempt is not an ack: its receipt acks nothing afterwards.
        const dead = await reserved('c', { maxAttempts: 1 });
        assert.deepEqual(await store.nack('c', dead, T0 + 1, { random: 0 }), { status: 'dead' });
        assert.equal(await store.ack('c', dead, T0 + 2), 'stale');
        // Once purged, the task and its receipt are gone.
        assert.equal(await store.purge(T0 + 10, 100), 2);
        assert.equal(await store.ack('a', receipt, T0 + 40), 'not_found');
      });

      it('reserves through its own refs as through their ids', async () => {
        const [a, b, c, d] = await store.schedule(
          [task('a', { runAt: T0 }), task('b', { runAt: T0 + 50 }), task('c', { runAt: T0 }), task('d', { runAt: T0 })],
          T0 - 10,
        );
        await store.cancel('c', T0 - 5);
        const refs = [a!.ref!, b!.ref!, c!.ref!, d!.ref!, a!.ref!];
        const claimed = await store.reserveRefs(refs, T0, 5_000);
        assert.deepEqual(
          claimed.map((r) => r.id),
          ['a', 'd'],
          'due and pending only: not b (later), not c (cancelled), not a twice',
        );
        assert.equal(claimed[0]!.reservedUntil, T0 + 5_000);
        assert.equal((await store.get('a'))?.state, 'reserved');
        assert.equal((await store.get('a'))?.receipt, claimed[0]!.receipt);
        assert.deepEqual(await store.reserveRefs([b!.ref!], T0 + 49), [], 'never before runAt');
        assert.equal((await store.reserveRefs([b!.ref!], T0 + 50))[0]?.id, 'b');
      });

      it('acks several deliveries in one call, each as ack would alone', async () => {
        const a = await reserved('a');
        const b = await reserved('b');
        const c = await reserved('c');
        const outcomes = await store.ackMany(
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
        // 'a' twice with its receipt: the second is the same ack again, so acked as well.
        assert.deepEqual(outcomes, ['acked', 'stale', 'not_found', 'acked', 'acked', 'stale']);
        assert.equal((await store.get('a'))?.state, 'completed');
        assert.equal((await store.get('a'))?.updatedAt, T0 + 5);
        assert.equal((await store.get('b'))?.state, 'reserved');
        assert.equal((await store.get('c'))?.state, 'completed');
        assert.deepEqual(await store.ackMany([], T0 + 6), []);
        const stats = await store.stats();
        assert.equal(stats.byState.completed, 2);
        assert.equal(stats.byState.reserved, 1);
      });

      it('retries a failed attempt after its backoff, with the error recorded', async () => {
        const receipt = await reserved('a', { backoff: { baseMs: 1_000, factor: 2, maxMs: 60_000, jitter: 0 } });
        const outcome = await store.nack('a', receipt, T0 + 10, { error: 'boom', random: 0.5 });
        assert.equal(outcome.status, 'retrying');
        assert.equal(outcome.status === 'retrying' && outcome.ref.dueAt, T0 + 10 + 1_000);
        const a = await store.get('a');
        assert.equal(a?.state, 'pending');
        assert.equal(a?.runAt, T0 + 1_010);
        assert.equal(a?.attempts, 1);
        assert.equal(a?.lastError, 'boom');
        assert.equal(a?.receipt, null);
        const [second] = await store.reserve(['a'], T0 + 1_010);
        assert.equal(second?.attempts, 2);
        const again = await store.nack('a', second.receipt!, T0 + 1_020, { random: 0 });
        assert.equal(again.status === 'retrying' && again.ref.dueAt, T0 + 1_020 + 2_000);
      });

      it('honours an explicit retry delay', async () => {
        const receipt = await reserved('a');
        const outcome = await store.nack('a', receipt, T0 + 5, { delayMs: 42, random: 0 });
        assert.equal(outcome.status === 'retrying' && outcome.ref.dueAt, T0 + 47);
      });

      it('buries a task that fails its last attempt, and retryDead brings it back', async () => {
        const receipt = await reserved('a', { maxAttempts: 1 });
        assert.deepEqual(await store.nack('a', receipt, T0 + 1, { error: 'final', random: 0 }), { status: 'dead' });
        const dead = await store.get('a');
        assert.equal(dead?.state, 'dead');
        assert.equal(dead?.lastError, 'final');
        assert.deepEqual(await loadAll(store, Number.POSITIVE_INFINITY), []);
        assert.deepEqual(await store.reserve(['a'], T0 + 10_000), []);
        const retried = await store.retryDead('a', T0 + 20, T0 + 10);
        assert.equal(retried.status, 'retried');
        const back = await store.get('a');
        assert.equal(back?.state, 'pending');
        assert.equal(back?.attempts, 0);
        assert.equal(back?.runAt, T0 + 20);
        assert.equal((await store.retryDead('a', T0, T0)).status, 'not_dead');
        assert.equal((await store.retryDead('missing', T0, T0)).status, 'not_found');
      });

      it('refuses fail with a stale receipt and leaves the task alone', async () => {
        const receipt = await reserved('a');
        assert.deepEqual(await store.nack('a', 'nope', T0 + 1, { random: 0 }), { status: 'stale' });
        assert.equal((await store.get('a'))?.state, 'reserved');
        assert.deepEqual(await store.nack('missing', receipt, T0 + 1, { random: 0 }), { status: 'not_found' });
      });

      it('expires a reservation only once it has run out, and redelivers at once', async () => {
        const receipt = await reserved('a');
        assert.deepEqual(await store.expire('a', receipt, T0 + 4_999), { status: 'stale' });
        const outcome = await store.expire('a', receipt, T0 + 5_000);
        assert.equal(outcome.status, 'retrying');
        assert.equal(outcome.status === 'retrying' && outcome.ref.dueAt, T0 + 5_000);
        const [second] = await store.reserve(['a'], T0 + 5_000);
        assert.equal(second?.attempts, 2);
        assert.notEqual(second?.receipt, receipt);
        // The first, slow attempt can no longer settle the task.
        assert.equal(await store.ack('a', receipt, T0 + 5_001), 'stale');
        assert.deepEqual(await store.expire('a', receipt, T0 + 99_999), { status: 'stale' });
        assert.equal(await store.ack('a', second.receipt!, T0 + 5_002), 'acked');
      });

      it('buries a task whose last reservation expires', async () => {
        const receipt = await reserved('a', { maxAttempts: 1 });
        assert.deepEqual(await store.expire('a', receipt, T0 + 5_000), { status: 'dead' });
        assert.equal((await store.get('a'))?.state, 'dead');
      });
    });

    describe('inspection', () => {
      it('cancelDead: dead -> cancelled, counted, listed and purged as a cancelled task; anything else refused', async () => {
        await store.schedule([task('d1', { runAt: T0, maxAttempts: 1 }), task('d2', { runAt: T0, maxAttempts: 1 }), task('p1', { runAt: T0 + 60_000 })], T0);
        for (const claimed of await store.reserve(['d1', 'd2'], T0)) assert.equal((await store.nack(claimed.id, claimed.receipt!, T0, { random: 0, error: 'x' })).status, 'dead');
        assert.equal(await store.cancelDead('d1', T0 + 1), 'cancelled');
        assert.equal(await store.cancelDead('d1', T0 + 2), 'not_dead');
        assert.equal(await store.cancelDead('p1', T0 + 2), 'not_dead');
        assert.equal(await store.cancelDead('missing', T0 + 2), 'not_found');
        const d1 = await store.get('d1');
        assert.equal(d1?.state, 'cancelled');
        assert.equal(d1?.updatedAt, T0 + 1);
        assert.deepEqual((await store.list({ state: 'dead', limit: 10 })).map((r) => r.id), ['d2']);
        assert.deepEqual((await store.list({ state: 'cancelled', limit: 10 })).map((r) => r.id), ['d1']);
        const stats = await store.stats();
        assert.equal(stats.byState.dead, 1);
        assert.equal(stats.byState.cancelled, 1);
        assert.equal(await store.purge(T0 + 10, 10), 1);
        assert.equal(await store.get('d1'), null);
        assert.equal((await store.get('d2'))?.state, 'dead');
      });

      it('dueHistogram counts pending tasks per bucket from the index, through every move in and out of pending', async () => {
        // The engine's loader reads the near window first: a store that parks far tasks files these in its index.
        await store.loadDue(T0 + 10 * 60_000, null, 100);
        await store.schedule(
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
        assert.equal(await store.cancel('x', T0), 'cancelled');
        assert.equal((await store.reschedule('e', T0 + 200_000, T0)).status, 'rescheduled');
        const [r] = await store.reserve(['r'], T0);
        const query = { from: T0, to: T0 + 300_000, bucketMs: 60_000 };
        let all = await store.dueHistogram(query);
        assert.ok(all.coveredUntil >= query.to, `covered until ${all.coveredUntil - T0}`);
        assert.deepEqual(all.counts, [2, 2, 1, 1, 0]);
        assert.equal((await store.nack('r', r!.receipt!, T0, { delayMs: 240_000, random: 0 })).status, 'retrying');
        all = await store.dueHistogram(query);
        assert.deepEqual(all.counts, [2, 2, 1, 1, 1]);
        // A last bucket cut short by `to`.
        assert.deepEqual((await store.dueHistogram({ from: T0, to: T0 + 300_000, bucketMs: 120_000 })).counts, [4, 2, 1]);
        // An empty range, and a range before every task.
        assert.deepEqual((await store.dueHistogram({ from: T0 + 3_600_000, to: T0 + 3_720_000, bucketMs: 60_000 })).counts, [0, 0]);
        // By topic, where the store's index has topics (coveredUntil says how far).
        const orders = await store.dueHistogram({ ...query, topic: 'orders' });
        const mail = await store.dueHistogram({ ...query, topic: 'mail' });
        assert.equal(orders.counts.length, 5);
        assert.ok(orders.coveredUntil >= query.from && orders.coveredUntil <= query.to);
        if (orders.coveredUntil === query.to) assert.deepEqual(orders.counts, [2, 1, 1, 1, 1]);
        if (mail.coveredUntil === query.to) assert.deepEqual(mail.counts, [0, 1, 0, 0, 0]);
        assert.deepEqual((await store.dueHistogram({ ...query, topic: 'nothing' })).counts, [0, 0, 0, 0, 0]);
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
        await store.loadDue(now + 10 * MINUTE, null, 100);
        await store.schedule(Array.from({ length: 400 }, (_, i) => task(`t${i}`, { topic: topics[i % 3]!, runAt: spread(now) })), now);
        for (let i = 0; i < 400; i += 7) await store.cancel(`t${i}`, now);
        for (let i = 1; i < 400; i += 11) if (i % 7 !== 0) await store.reschedule(`t${i}`, spread(now), now);
        // Time passes: the near index is read (far tasks come into it), due tasks are reserved.
        for (const step of [20 * MINUTE, 3 * HOUR, 30 * HOUR]) {
          now = T0 + step;
          const due = await loadAll(store, now);
          for (let i = 0; i < due.length; i += 100) await store.reserve(due.slice(i, i + 100).map((ref) => ref.id), now);
          await store.schedule(Array.from({ length: 60 }, (_, i) => task(`n${step}-${i}`, { topic: topics[i % 3]!, runAt: spread(now) })), now);
          for (let i = 2; i < 400; i += 13) await store.reschedule(`t${i}`, spread(now), now);
        }
        // The reference: every pending task, listed.
        const pending: Array<{ topic: string; runAt: number }> = [];
        for (let afterId: string | undefined; ; ) {
          const page = await store.list({ state: 'pending', limit: 500, ...(afterId !== undefined ? { afterId } : {}) });
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
            const got = await store.dueHistogram({ from, to, bucketMs, ...(topic !== undefined ? { topic } : {}) });
            assert.equal(got.coveredUntil, to, `${label}, buckets of ${bucketMs / MINUTE} min: covered until ${(got.coveredUntil - from) / MINUTE} min`);
            assert.deepEqual(got.counts, expected(from, to, bucketMs, topic), `${label}, buckets of ${bucketMs / MINUTE} min`);
          }
        }
      });

      it('counts tasks by state and by topic', async () => {
        await store.schedule([task('a', { runAt: T0 }), task('b', { runAt: T0 }), task('c', { topic: 'mail' }), task('d', { topic: 'mail' })], T0);
        const [a] = await store.reserve(['a'], T0);
        await store.ack('a', a!.receipt!, T0);
        await store.reserve(['b'], T0);
        await store.cancel('d', T0);
        const stats = await store.stats();
        assert.deepEqual(stats.byState, { pending: 1, reserved: 1, completed: 1, dead: 0, cancelled: 1 });
        assert.deepEqual(stats.byTopic['orders'], { reserved: 1, completed: 1 });
        assert.deepEqual(stats.byTopic['mail'], { pending: 1, cancelled: 1 });
      });

      it('lists by id order with topic and state filters, paged', async () => {
        await store.schedule(['e', 'b', 'd', 'a', 'c'].map((id) => task(id, { topic: id < 'c' ? 'one' : 'two' })), T0);
        await store.cancel('d', T0);
        const page1 = await store.list({ limit: 2 });
        assert.deepEqual(
          page1.map((r) => r.id),
          ['a', 'b'],
        );
        const page2 = await store.list({ limit: 2, afterId: 'b' });
        assert.deepEqual(
          page2.map((r) => r.id),
          ['c', 'd'],
        );
        assert.deepEqual(
          (await store.list({ limit: 10, topic: 'two', state: 'pending' })).map((r) => r.id),
          ['c', 'e'],
        );
        assert.deepEqual(
          (await store.list({ limit: 10, state: 'cancelled' })).map((r) => r.id),
          ['d'],
        );
      });

      it('lists dead and reserved tasks by id order, paged, by topic, and only while in that state', async () => {
        const ids = ['k', 'c', 'h', 'a', 'f', 'b', 'j', 'e', 'i', 'g', 'd'];
        await store.schedule(
          ids.map((id) => task(id, { runAt: T0, topic: id < 'f' ? 'one' : 'two', maxAttempts: 1 })),
          T0,
        );
        const claimed = await store.reserve(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], T0);
        const receipt = (id: string): string => claimed.find((r) => r.id === id)!.receipt!;
        for (const id of ['b', 'd', 'f', 'h']) assert.deepEqual(await store.nack(id, receipt(id), T0 + 1, { random: 0 }), { status: 'dead' });
        await store.ack('a', receipt('a'), T0 + 1);
        // dead: b d f h; reserved: c e g; pending: i j k; completed: a
        const pages: string[][] = [];
        for (let after: string | undefined; ; ) {
          const page = await store.list({ state: 'dead', limit: 3, ...(after === undefined ? {} : { afterId: after }) });
          if (page.length === 0) break;
          assert.ok(page.every((r) => r.state === 'dead'));
          pages.push(page.map((r) => r.id));
          after = page.at(-1)!.id;
        }
        assert.deepEqual(pages, [['b', 'd', 'f'], ['h']]);
        assert.deepEqual(
          (await store.list({ state: 'dead', topic: 'two', limit: 10 })).map((r) => r.id),
          ['f', 'h'],
        );
        assert.deepEqual(
          (await store.list({ state: 'reserved', limit: 10 })).map((r) => r.id),
          ['c', 'e', 'g'],
        );
        assert.deepEqual(
          (await store.list({ state: 'reserved', topic: 'one', limit: 10, afterId: 'c' })).map((r) => r.id),
          ['e'],
        );
        await store.ack('e', receipt('e'), T0 + 2);
        assert.equal((await store.retryDead('d', T0 + 10, T0 + 2)).status, 'retried');
        assert.deepEqual(
          (await store.list({ state: 'reserved', limit: 10 })).map((r) => r.id),
          ['c', 'g'],
        );
        assert.deepEqual(
          (await store.list({ state: 'dead', limit: 10 })).map((r) => r.id),
          ['b', 'f', 'h'],
        );
      });

      it('purges finished tasks older than the cutoff and frees their ids', async () => {
        await store.schedule([task('old', { runAt: T0 }), task('new', { runAt: T0 }), task('live'), task('dead', { runAt: T0, maxAttempts: 1 })], T0);
        const claimed = await store.reserve(['old', 'new', 'dead'], T0);
        const receipt = (id: string): string => claimed.find((r) => r.id === id)!.receipt!;
        await store.ack('old', receipt('old'), T0 + 10);
        await store.ack('new', receipt('new'), T0 + 1_000);
        await store.nack('dead', receipt('dead'), T0 + 10, { random: 0 });
        assert.equal(await store.purge(T0 + 500, 100), 1);
        assert.equal(await store.get('old'), null);
        assert.equal((await store.get('new'))?.state, 'completed');
        assert.equal((await store.get('live'))?.state, 'pending');
        assert.equal((await store.get('dead'))?.state, 'dead');
        const [reused] = await store.schedule([task('old')], T0 + 2_000);
        assert.equal(reused?.created, true);
        const stats = await store.stats();
        assert.equal(stats.byState.completed, 1);
      });
    });

    describe('push subscriptions', () => {
      it('gives back what was put, every field; an unknown topic has none', async () => {
        const orders = pushSubscription('orders');
        await store.putPushSubscription(orders);
        assert.deepEqual(await store.getPushSubscription('orders'), orders);
        assert.equal(await store.getPushSubscription('invoices'), null);
      });

      it('replaces on a second put: url, secrets, headers, limits and updatedAt all change', async () => {
        await store.putPushSubscription(pushSubscription('orders'));
        const rotated = pushSubscription('orders', {
          url: 'http://10.1.2.3:8080/hooks?x=1',
          secrets: [
            { secret: `whsec_${Buffer.alloc(24, 2).toString('base64')}`, expiresAt: null },
            { secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`, expiresAt: T0 + 86_400_000 },
          ],
          timeoutMs: 2_500,
          concurrency: 1,
          headers: {},
          updatedAt: T0 + 60_000,
        });
        await store.putPushSubscription(rotated);
        assert.deepEqual(await store.getPushSubscription('orders'), rotated);
        assert.deepEqual(await store.listPushSubscriptions(), [rotated]);
      });

      it('lists every subscription by topic, in ascending order', async () => {
        assert.deepEqual(await store.listPushSubscriptions(), []);
        for (const topic of ['orders', 'B', 'a.b:c-d_e', 'invoices', '0']) await store.putPushSubscription(pushSubscription(topic));
        assert.deepEqual(
          (await store.listPushSubscriptions()).map((s) => s.topic),
          ['0', 'B', 'a.b:c-d_e', 'invoices', 'orders'],
        );
      });

      it('deletes: true when there was one, then false; it is gone from get and list', async () => {
        await store.putPushSubscription(pushSubscription('orders'));
        await store.putPushSubscription(pushSubscription('invoices'));
        assert.equal(await store.deletePushSubscription('orders'), true);
        assert.equal(await store.deletePushSubscription('orders'), false);
        assert.equal(await store.deletePushSubscription('never'), false);
        assert.equal(await store.getPushSubscription('orders'), null);
        assert.deepEqual((await store.listPushSubscriptions()).map((s) => s.topic), ['invoices']);
      });

      it('keeps topics of every valid character apart, and names that are object keys too', async () => {
        const topics = ['a.b:c-d_e', 'a.b:c-d_E', '__proto__', 'constructor'];
        for (const [i, topic] of topics.entries()) await store.putPushSubscription(pushSubscription(topic, { concurrency: i + 1 }));
        for (const [i, topic] of topics.entries()) assert.equal((await store.getPushSubscription(topic))?.concurrency, i + 1, topic);
        assert.deepEqual((await store.listPushSubscriptions()).map((s) => [s.topic, s.concurrency]), [
          ['__proto__', 3],
          ['a.b:c-d_E', 2],
          ['a.b:c-d_e', 1],
          ['constructor', 4],
        ]);
        assert.equal(await store.deletePushSubscription('a.b:c-d_e'), true);
        assert.equal((await store.getPushSubscription('a.b:c-d_E'))?.concurrency, 2);
      });

      it('are not tasks: subscriptions leave stats and list untouched', async () => {
        await store.putPushSubscription(pushSubscription('orders'));
        const stats = await store.stats();
        assert.deepEqual(stats.byTopic, {});
        assert.deepEqual(await store.list({ limit: 10 }), []);
      });

      it('rejects subscription calls after close', async () => {
        await store.close();
        await assert.rejects(() => store.putPushSubscription(pushSubscription('orders')));
        await assert.rejects(() => store.getPushSubscription('orders'));
        await assert.rejects(() => store.listPushSubscriptions());
        await assert.rejects(() => store.deletePushSubscription('orders'));
      });
    });

    describe('defer', () => {
      it('gives a reservation back uncounted: pending at runAt, attempts as before, lastError kept, a run timer', async () => {
        await store.schedule([task('d', { maxAttempts: 1 })], T0);
        const [first] = await store.reserve(['d'], T0 + 1_000);
        const nacked = await store.nack('d', first!.receipt!, T0 + 1_001, { delayMs: 0, error: 'HTTP 503', random: 0 });
        assert.equal(nacked.status, 'dead', 'one attempt: a nack kills it');
        await store.retryDead('d', T0 + 2_000, T0 + 1_002);
        const [second] = await store.reserve(['d'], T0 + 2_000);
        assert.equal(second?.attempts, 1);
        const deferred = await store.defer('d', second.receipt!, T0 + 30_000, T0 + 2_001);
        assert.equal(deferred.status, 'deferred');
        if (deferred.status === 'deferred') assert.deepEqual([deferred.ref.id, deferred.ref.kind, deferred.ref.dueAt, deferred.ref.topic], ['d', 'run', T0 + 30_000, 'orders']);
        const back = await store.get('d');
        assert.deepEqual([back?.state, back?.attempts, back?.runAt, back?.receipt, back?.reservedUntil, back?.lastError], ['pending', 0, T0 + 30_000, null, null, 'HTTP 503']);
        assert.deepEqual(await store.reserve(['d'], T0 + 29_999), [], 'not before its new runAt');
        const [third] = await store.reserve(['d'], T0 + 30_000);
        assert.equal(third?.attempts, 1, 'the deferred attempt was not counted');
        assert.deepEqual((await loadAll(store, T0 + 100_000)).map((r) => [r.id, r.kind]), [['d', 'ttr']]);
        const stats = await store.stats();
        assert.deepEqual([stats.byState.reserved, stats.byState.pending], [1, 0]);
      });

      it('to its own runAt, already past (a push that found no slot): pending and due at once, its attempt not counted', async () => {
        await store.schedule([task('d')], T0);
        const [first] = await store.reserve(['d'], T0 + 1_000);
        const deferred = await store.defer('d', first!.receipt!, T0, T0 + 1_001);
        assert.equal(deferred.status === 'deferred' ? deferred.ref.dueAt : deferred.status, T0);
        const back = await store.get('d');
        assert.deepEqual([back?.state, back?.attempts, back?.runAt], ['pending', 0, T0]);
        const [again] = await store.reserve(['d'], T0 + 1_002);
        assert.deepEqual([again?.id, again?.attempts, again?.runAt], ['d', 1, T0]);
      });

      it('is refused with a stale receipt or for an unknown id, and changes nothing', async () => {
        await store.schedule([task('d')], T0);
        assert.deepEqual(await store.defer('d', '1.nope', T0 + 5_000, T0), { status: 'stale' }, 'pending, not reserved');
        const [r] = await store.reserve(['d'], T0 + 1_000);
        assert.deepEqual(await store.defer('d', `${r!.receipt!}x`, T0 + 5_000, T0 + 1_001), { status: 'stale' });
        assert.deepEqual(await store.defer('nope', r!.receipt!, T0 + 5_000, T0 + 1_001), { status: 'not_found' });
        const still = await store.get('d');
        assert.deepEqual([still?.state, still?.attempts], ['reserved', 1]);
        await store.ack('d', r!.receipt!, T0 + 1_002);
        assert.deepEqual(await store.defer('d', r!.receipt!, T0 + 5_000, T0 + 1_003), { status: 'stale' }, 'completed');
      });

      it('keeps a task with its own url on the push lane', async () => {
        await store.schedule([task('u', { url: 'https://h.example.com/x' })], T0);
        const [r] = await store.reserve(['u'], T0 + 1_000);
        const deferred = await store.defer('u', r!.receipt!, T0 + 9_000, T0 + 1_001);
        assert.equal(deferred.status === 'deferred' ? deferred.ref.topic : deferred.status, PUSH_LANE);
        assert.equal((await store.get('u'))?.url, 'https://h.example.com/x');
      });
    });

    describe('own push url', () => {
      // Separators of the Redis packed body and an escape character, all kept exactly.
      const URL_1 = 'https://hooks.example.com/a,b|c%2Cd/%7C?x=1,2&y=%25';
      const URL_2 = 'http://10.0.0.1:8080/hook';

      it('is kept on the task; its timers are filed under the push lane, its topic and counts stay', async () => {
        const outcomes = await store.schedule([task('u', { url: URL_1 }), task('p')], T0);
        assert.equal(outcomes[0]!.ref?.topic, PUSH_LANE);
        assert.equal(outcomes[1]!.ref?.topic, 'orders');
        const u = await store.get('u');
        assert.equal(u?.url, URL_1);
        assert.equal(u?.topic, 'orders');
        assert.equal((await store.get('p'))?.url, null);
        const refs = await loadAll(store, T0 + 10_000);
        assert.deepEqual(
          refs.map((r) => [r.id, r.topic]),
          [
            ['u', PUSH_LANE],
            ['p', 'orders'],
          ],
        );
        assert.deepEqual((await store.stats()).byTopic, { orders: { pending: 2 } });
        assert.deepEqual(
          (await store.list({ topic: 'orders', limit: 10 })).map((r) => [r.id, r.url]),
          [
            ['p', null],
            ['u', URL_1],
          ],
        );
      });

      it('survives a batch insert among tasks without one, and settings that differ', async () => {
        const tasks = Array.from({ length: 40 }, (_, i) => task(`b${i}`, i % 3 === 0 ? { url: i % 2 === 0 ? URL_1 : URL_2 } : i % 5 === 0 ? { ttrMs: 7_000 } : {}));
        const outcomes = await store.schedule(tasks, T0);
        for (const [i, outcome] of outcomes.entries()) assert.equal(outcome.ref?.topic, i % 3 === 0 ? PUSH_LANE : 'orders', `b${i}`);
        for (let i = 0; i < 40; i++) assert.equal((await store.get(`b${i}`))?.url, i % 3 === 0 ? (i % 2 === 0 ? URL_1 : URL_2) : null, `b${i}`);
      });

      it('is handed out by reserve, and kept through nack (with an error), expire, reschedule and retryDead', async () => {
        await store.schedule([task('u', { url: URL_1, maxAttempts: 2 })], T0);
        const [reserved] = await store.reserve(['u'], T0 + 1_000);
        assert.equal(reserved?.url, URL_1);
        assert.equal(reserved?.topic, 'orders');
        const nacked = await store.nack('u', reserved.receipt!, T0 + 1_001, { delayMs: 10, error: 'HTTP 503: down, | again', random: 0 });
        assert.equal(nacked.status, 'retrying');
        if (nacked.status === 'retrying') assert.equal(nacked.ref.topic, PUSH_LANE);
        const failed = await store.get('u');
        assert.deepEqual([failed?.url, failed?.lastError, failed?.payload], [URL_1, 'HTTP 503: down, | again', JSON.stringify({ id: 'u', n: 1 })]);
        const moved = await store.reschedule('u', T0 + 2_000, T0 + 1_002);
        assert.equal(moved.status === 'rescheduled' ? moved.ref.topic : moved.status, PUSH_LANE);
        const [again] = await store.reserve(['u'], T0 + 2_000);
        assert.equal(again?.url, URL_1);
        const expired = await store.expire('u', again.receipt!, T0 + 2_000 + 5_000);
        assert.equal(expired.status, 'dead');
        const retried = await store.retryDead('u', T0 + 9_000, T0 + 8_000);
        assert.equal(retried.status === 'retried' ? retried.ref.topic : retried.status, PUSH_LANE);
        assert.equal((await store.get('u'))?.url, URL_1);
        const refs = await loadAll(store, T0 + 10_000);
        assert.deepEqual(refs.map((r) => [r.id, r.topic]), [['u', PUSH_LANE]]);
      });

      it('a reservation of a task with one runs out under the push lane', async () => {
        await store.schedule([task('u', { url: URL_2 })], T0);
        await store.reserve(['u'], T0 + 1_000);
        const [ttr] = await loadAll(store, T0 + 100_000);
        assert.deepEqual([ttr?.kind, ttr?.topic], ['ttr', PUSH_LANE]);
        const expired = await store.expire('u', ttr!.receipt!, T0 + 6_000);
        assert.equal(expired.status === 'retrying' ? expired.ref.topic : expired.status, PUSH_LANE);
      });

      it('an id scheduled again with or without a url gets no timer on the other lane', async () => {
        await store.schedule([task('p'), task('u', { url: URL_1 })], T0);
        const [p, u] = await store.schedule([task('p', { url: URL_1 }), task('u')], T0 + 1);
        assert.equal(p?.created, false);
        assert.equal(u?.created, false);
        if (p?.ref) assert.equal(p.ref.topic, 'orders');
        if (u?.ref) assert.equal(u.ref.topic, PUSH_LANE);
        assert.equal((await store.get('p'))?.url, null);
        assert.equal((await store.get('u'))?.url, URL_1);
      });
    });

    describe('recurring schedules', () => {
      it('gives back what was put, every field; an unknown id has none', async () => {
        const daily = scheduleRecord('daily');
        const every = scheduleRecord('every', { cron: null, tz: 'UTC', everyMs: 1_000, startAt: null, endAt: T0 + 1e9, limit: null, misfire: 'all', paused: true, nextAt: null, lastAt: T0, count: 7 });
        const pushed = scheduleRecord('pushed', { url: 'https://hooks.example.com/cron?a=1,2' });
        await store.putSchedule(daily);
        await store.putSchedule(every);
        await store.putSchedule(pushed);
        assert.deepEqual(await store.getSchedule('daily'), daily);
        assert.deepEqual(await store.getSchedule('every'), every);
        assert.deepEqual(await store.getSchedule('pushed'), pushed);
        assert.deepEqual((await store.listSchedules()).find((s) => s.id === 'pushed'), pushed);
        assert.equal(await store.getSchedule('never'), null);
      });

      it('lists by id in ascending order, keeps ids of every valid character apart, deletes', async () => {
        const ids = ['b', 'a.b:c-d_E', 'a.b:c-d_e', '__proto__', 'A'];
        for (const [i, id] of ids.entries()) await store.putSchedule(scheduleRecord(id, { count: i }));
        assert.deepEqual((await store.listSchedules()).map((s) => [s.id, s.count]), [['A', 4], ['__proto__', 3], ['a.b:c-d_E', 1], ['a.b:c-d_e', 2], ['b', 0]]);
        assert.equal(await store.deleteSchedule('b'), true);
        assert.equal(await store.deleteSchedule('b'), false);
        assert.equal(await store.getSchedule('b'), null);
        assert.equal((await store.listSchedules()).length, 4);
      });

      it('puts and gets many in one call: one answer per id in input order, null for none', async () => {
        const a = scheduleRecord('a');
        const b = scheduleRecord('b', { url: 'https://hooks.example.com/b', count: 3 });
        await store.putSchedules([a, b]);
        await store.putSchedules([]);
        assert.deepEqual(await store.getSchedules(['b', 'none', 'a']), [b, null, a]);
        assert.deepEqual(await store.getSchedules([]), []);
        const a2 = { ...a, count: 9 };
        await store.putSchedules([a2]);
        assert.deepEqual(await store.getSchedule('a'), a2);
      });

      it('puts new schedules only: an id that has one keeps it and answers it', async () => {
        const a = scheduleRecord('a', { count: 4 });
        await store.putSchedule(a);
        const before = await store.schedulesVersion();
        const b = scheduleRecord('b', { url: 'https://hooks.example.com/b' });
        assert.deepEqual(await store.putNewSchedules([b, { ...a, count: 0, rev: 7 }]), [null, a]);
        assert.deepEqual(await store.getSchedule('a'), a, 'left as it was');
        assert.deepEqual(await store.getSchedule('b'), b);
        assert.notEqual(await store.schedulesVersion(), before);
        const after = await store.schedulesVersion();
        assert.deepEqual(await store.putNewSchedules([a, b]), [a, b]);
        assert.equal(await store.schedulesVersion(), after, 'nothing stored, nothing to re-read');
        assert.deepEqual(await store.putNewSchedules([]), []);
      });

      it('swaps only from the exact stored schedule: a stale expected record changes nothing', async () => {
        const v1 = scheduleRecord('s');
        await store.putSchedule(v1);
        const v2 = { ...v1, nextAt: T0 + 120_000, lastAt: T0 + 60_000, count: 1 };
        assert.equal(await store.swapSchedule(v1, v2), true);
        assert.deepEqual(await store.getSchedule('s'), v2);
        // A second process planned from v1 too: its swap fails, v2 stays.
        assert.equal(await store.swapSchedule(v1, { ...v1, count: 99 }), false);
        assert.deepEqual(await store.getSchedule('s'), v2);
        // A swap of a deleted schedule does not bring it back.
        await store.deleteSchedule('s');
        assert.equal(await store.swapSchedule(v2, { ...v2, count: 2 }), false);
        assert.equal(await store.getSchedule('s'), null);
      });

      it('swaps many in one call, each on its own', async () => {
        const a = scheduleRecord('a');
        const b = scheduleRecord('b');
        await store.putSchedule(a);
        await store.putSchedule(b);
        const results = await store.swapSchedules([
          { expected: a, next: { ...a, count: 1 } },
          { expected: { ...b, count: 5 }, next: { ...b, count: 6 } },
        ]);
        assert.deepEqual(results, [true, false]);
        assert.equal((await store.getSchedule('a'))?.count, 1);
        assert.equal((await store.getSchedule('b'))?.count, 0);
        assert.deepEqual(await store.swapSchedules([]), []);
      });

      it('moves schedulesVersion with every change another reader must re-read, not with moves forward', async () => {
        const changed = async (what: string, change: () => Promise<unknown>, expected = true): Promise<void> => {
          const before = await store.schedulesVersion();
          await change();
          const after = await store.schedulesVersion();
          assert.equal(after !== before, expected, `${what}: ${before} -> ${after}`);
        };
        const a = scheduleRecord('a');
        const b = scheduleRecord('b');
        const c = scheduleRecord('c');
        await changed('putSchedule', () => store.putSchedule(a));
        await changed('putSchedules', () => store.putSchedules([b, c]));
        const moved = { ...a, nextAt: T0 + 120_000, lastAt: T0 + 60_000, count: 1, updatedAt: T0 + 1 };
        await changed('a swap moving a schedule forward', () => store.swapSchedule(a, moved), false);
        await changed('a failed swap', () => store.swapSchedule(a, { ...a, rev: 9 }), false);
        const redefined = { ...moved, rev: moved.rev + 1, everyMs: 5_000 };
        await changed('a swap to a new rev', () => store.swapSchedule(moved, redefined));
        const paused = { ...redefined, paused: true };
        await changed('a swap pausing', () => store.swapSchedules([{ expected: redefined, next: paused }]));
        // A call mixing both kinds answers in input order and counts the change.
        const bMoved = { ...b, count: 1 };
        await changed('swaps of both kinds', async () => {
          const stale = { ...c, count: 3 };
          assert.deepEqual(await store.swapSchedules([{ expected: b, next: bMoved }, { expected: paused, next: { ...paused, paused: false } }, { expected: stale, next: { ...stale, rev: 2 } }]), [true, true, false]);
        });
        assert.equal((await store.getSchedule('b'))?.count, 1);
        assert.equal((await store.getSchedule('a'))?.paused, false);
        await changed('deleteSchedule', () => store.deleteSchedule('b'));
        assert.equal(await store.getSchedule('b'), null);
      });

      it('concurrent swaps from one record: exactly one wins', async () => {
        const v1 = scheduleRecord('s');
        await store.putSchedule(v1);
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.swapSchedule(v1, { ...v1, count: i + 1 })));
        assert.equal(results.filter(Boolean).length, 1);
      });

      it('are not tasks, and calls after close reject', async () => {
        await store.putSchedule(scheduleRecord('s'));
        assert.deepEqual(await store.list({ limit: 10 }), []);
        await store.close();
        await assert.rejects(() => store.putSchedule(scheduleRecord('s')));
        await assert.rejects(() => store.listSchedules());
        await assert.rejects(() => store.swapSchedule(scheduleRecord('s'), scheduleRecord('s')));
      });
    });

    describe('lifecycle', () => {
      it('rejects calls after close', async () => {
        await store.close();
        await assert.rejects(() => store.get('a'));
        await assert.rejects(() => store.schedule([task('a')], T0));
        await store.close(); // idempotent: the cleanup closes it once more
      });
    });
  });
}
