/** The store suite's cases of the attempt history (runStoreConformance, ./index.ts; core/task/history.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { HISTORY_ERROR_LIMIT, HISTORY_LIMIT, type AttemptEntry } from '../../core/task/history.js';
import { T0, task } from './fixtures.js';

/** `store` is the store of the case running: a fresh one for each. */
export function historyCases(store: TaskStore): void {
  describe('attempt history', () => {
    async function reserveAt(id: string, now: number, ttrMs?: number): Promise<string> {
      const [record] = await store.tasks.reserve([id], now, ttrMs);
      assert.ok(record?.receipt, `${id} reserved at ${now}`);
      return record.receipt;
    }

    it('starts empty, and keeps a nack, an expiry and an ack, oldest first, each with its start, duration and end', async () => {
      await store.tasks.schedule([task('h', { runAt: T0, maxAttempts: 5, ttrMs: 1_000 })], T0 - 10);
      assert.deepEqual((await store.tasks.get('h'))?.history, []);
      const first = await reserveAt('h', T0 + 5);
      await store.tasks.nack({ id: 'h', receipt: first, now: T0 + 105, delayMs: 0, error: 'boom, | 1: x', random: 0 });
      const second = await reserveAt('h', T0 + 200);
      assert.deepEqual((await store.tasks.get('h'))?.history.length, 1, 'a reservation adds nothing: its attempt has not ended');
      const expired = await store.tasks.expire('h', second, T0 + 1_200);
      assert.equal(expired.status, 'retrying');
      const third = await reserveAt('h', T0 + 1_300);
      assert.equal((await store.tasks.ack('h', third, T0 + 1_342)).status, 'acked');
      const done = await store.tasks.get('h');
      assert.deepEqual(done?.history, [
        { attempt: 1, startedAt: T0 + 5, durationMs: 100, outcome: 'nacked', error: 'boom, | 1: x' },
        { attempt: 2, startedAt: T0 + 200, durationMs: 1_000, outcome: 'expired', error: 'reservation expired (ttr)' },
        { attempt: 3, startedAt: T0 + 1_300, durationMs: 42, outcome: 'acked', error: null },
      ] satisfies AttemptEntry[]);
      assert.deepEqual([done?.state, done?.payload, done?.lastError], ['completed', task('h').payload, 'reservation expired (ttr)'], 'the payload and lastError read as before');
      assert.deepEqual(await store.tasks.ack('h', third, T0 + 2_000), { status: 'already_acked' });
      assert.equal((await store.tasks.get('h'))?.history.length, 3, 'an ack sent again adds nothing');
    });

    it('keeps the nack outcome it is given (a push class), and the entry of an attempt that buried the task', async () => {
      await store.tasks.schedule([task('p', { runAt: T0, maxAttempts: 2 })], T0);
      const first = await reserveAt('p', T0);
      await store.tasks.nack({ id: 'p', receipt: first, now: T0 + 7, delayMs: 0, error: 'HTTP 503: down', outcome: 'push:5xx', random: 0 });
      const second = await reserveAt('p', T0 + 10);
      assert.equal((await store.tasks.nack({ id: 'p', receipt: second, now: T0 + 12, error: 'timeout after 10000 ms', outcome: 'push:timeout', random: 0 })).status, 'dead');
      const dead = await store.tasks.get('p');
      assert.deepEqual(
        dead?.history.map((e) => [e.attempt, e.outcome, e.error, e.durationMs]),
        [
          [1, 'push:5xx', 'HTTP 503: down', 7],
          [2, 'push:timeout', 'timeout after 10000 ms', 2],
        ],
      );
      assert.equal(dead?.state, 'dead');
      assert.equal((await store.tasks.retryDead('p', T0 + 20, T0 + 20)).status, 'retried');
      assert.equal((await store.tasks.get('p'))?.history.length, 2, 'a dead task retried keeps its history');
    });

    it('a defer leaves no entry (the reservation is given back uncounted)', async () => {
      await store.tasks.schedule([task('d', { runAt: T0 })], T0);
      const receipt = await reserveAt('d', T0);
      assert.equal((await store.tasks.defer({ id: 'd', receipt, runAt: T0 + 50, now: T0 + 1 })).status, 'deferred');
      assert.deepEqual((await store.tasks.get('d'))?.history, []);
    });

    it(`keeps the last ${HISTORY_LIMIT} attempts, and cuts each error to ${HISTORY_ERROR_LIMIT} characters`, async () => {
      const attempts = HISTORY_LIMIT + 3;
      await store.tasks.schedule([task('b', { runAt: T0, maxAttempts: attempts + 1 })], T0);
      const long = 'é'.repeat(HISTORY_ERROR_LIMIT) + 'the rest is cut';
      for (let n = 1; n <= attempts; n++) {
        const receipt = await reserveAt('b', T0 + n * 100);
        await store.tasks.nack({ id: 'b', receipt, now: T0 + n * 100 + n, delayMs: 0, error: `${n}: ${long}`, random: 0 });
      }
      const b = await store.tasks.get('b');
      assert.equal(b?.history.length, HISTORY_LIMIT);
      assert.deepEqual(
        b?.history.map((e) => e.attempt),
        Array.from({ length: HISTORY_LIMIT }, (_, i) => attempts - HISTORY_LIMIT + 1 + i),
        'the oldest dropped first',
      );
      const last = b.history[HISTORY_LIMIT - 1]!;
      assert.deepEqual([last.startedAt, last.durationMs], [T0 + attempts * 100, attempts]);
      assert.equal(last.error, `${attempts}: ${long}`.slice(0, HISTORY_ERROR_LIMIT));
      assert.equal(b?.lastError, `${attempts}: ${long}`, 'lastError keeps the whole text');
      assert.equal(b?.payload, task('b').payload);
      const receipt = await reserveAt('b', T0 + 10_000);
      assert.equal((await store.tasks.ack('b', receipt, T0 + 10_001)).status, 'acked');
      const acked = await store.tasks.get('b');
      assert.deepEqual(
        [acked?.history.length, acked?.history[0]?.attempt, acked?.history[HISTORY_LIMIT - 1]?.outcome],
        [HISTORY_LIMIT, attempts - HISTORY_LIMIT + 2, 'acked'],
      );
    });

    it('keeps the history of tasks acked in one batch, each its own', async () => {
      await store.tasks.schedule([task('x', { runAt: T0 }), task('y', { runAt: T0, topic: 'mail' })], T0);
      const [x, y] = await store.tasks.reserve(['x', 'y'], T0 + 3);
      await store.tasks.ackMany(
        [
          { id: 'x', receipt: x!.receipt! },
          { id: 'y', receipt: y!.receipt! },
        ],
        T0 + 9,
      );
      for (const id of ['x', 'y']) assert.deepEqual((await store.tasks.get(id))?.history, [{ attempt: 1, startedAt: T0 + 3, durationMs: 6, outcome: 'acked', error: null }]);
      const listed = await store.tasks.list({ limit: 10 });
      assert.deepEqual(
        listed.map((t) => t.history.length),
        [1, 1],
        'list carries it too',
      );
    });
  });
}
