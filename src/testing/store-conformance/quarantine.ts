/**
 * The store suite's cases of quarantine (runStoreConformance, ./index.ts;
 * core/task/undecodable.ts): the write half of taking a row the engine cannot read out of
 * delivery. Each store's own tests write such rows with its driver and read them through a
 * queue; here, on any row, the move itself: pending, or reserved under the receipt given,
 * to dead with the error as lastError, counted; anything else left alone.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { T0, task } from './fixtures.js';

const ERROR = 'UNDECODABLE_ROW: its payload is not JSON';

/** `store` is the store of the case running: a fresh one for each. */
export function quarantineCases(store: TaskStore): void {
  describe('quarantine', () => {
    const supported = (t: TestContext): boolean => {
      if (store.tasks.quarantine !== undefined) return true;
      t.skip('this store has no quarantine (optional)');
      return false;
    };

    it('a pending task and a reserved one (under its receipt) go to dead with the error; counted, listed, retryable', async (t) => {
      if (!supported(t)) return;
      await store.tasks.schedule([task('p', { runAt: T0 }), task('r', { runAt: T0 }), task('far', { runAt: T0 + 40 * 86_400_000 })], T0 - 10);
      const [reserved] = await store.tasks.reserve(['r'], T0);
      assert.ok(reserved?.receipt);
      await store.tasks.quarantine!(
        [
          { id: 'p', receipt: null, error: ERROR },
          { id: 'r', receipt: reserved.receipt, error: ERROR },
          { id: 'far', receipt: null, error: ERROR },
          { id: 'missing', receipt: null, error: ERROR },
        ],
        T0 + 5,
      );
      for (const id of ['p', 'r', 'far']) {
        const record = await store.tasks.get(id);
        assert.equal(record?.state, 'dead', id);
        assert.equal(record.lastError, ERROR, id);
        assert.equal(record.receipt, null, id);
        assert.equal(record.reservedUntil, null, id);
      }
      assert.deepEqual({ ...(await store.tasks.stats()).byState }, { pending: 0, reserved: 0, completed: 0, dead: 3, cancelled: 0 });
      assert.deepEqual((await store.tasks.list({ state: 'dead', limit: 10 })).map((r) => r.id), ['far', 'p', 'r']);
      assert.deepEqual(await store.tasks.reserve(['p', 'r'], T0 + 10), [], 'out of delivery');
      assert.equal((await store.tasks.retryDead('p', T0 + 20, T0 + 20)).status, 'retried', 'a mended row can be retried');
      assert.equal((await store.tasks.get('p'))?.state, 'pending');
    });

    it('leaves alone a reservation under another receipt, a reserved task read without one, and a finished task', async (t) => {
      if (!supported(t)) return;
      await store.tasks.schedule([task('r', { runAt: T0 }), task('done', { runAt: T0 })], T0 - 10);
      const [reserved, done] = await store.tasks.reserve(['r', 'done'], T0);
      assert.equal((await store.tasks.ack('done', done!.receipt!, T0 + 1)).status, 'acked');
      await store.tasks.quarantine!(
        [
          { id: 'r', receipt: `${reserved!.receipt!}x`, error: ERROR },
          { id: 'r', receipt: null, error: ERROR },
          { id: 'done', receipt: null, error: ERROR },
          { id: 'done', receipt: done!.receipt, error: ERROR },
        ],
        T0 + 5,
      );
      assert.equal((await store.tasks.get('r'))?.state, 'reserved');
      assert.equal((await store.tasks.get('r'))?.lastError, null);
      assert.equal((await store.tasks.get('done'))?.state, 'completed');
      assert.equal((await store.tasks.ack('r', reserved!.receipt!, T0 + 6)).status, 'acked', 'the reservation is intact');
    });
  });
}
