/**
 * The server crashes while one of the store's own transactions holds a pooled connection
 * (here a reschedule waiting on a row lock another session holds): the call rejects with
 * STORE_UNAVAILABLE and the process lives on. node-postgres emits 'error' on a client whose
 * connection ends, and the pool listens only on the clients it holds idle: a checked-out
 * client with no listener of its own threw it as an uncaught exception, which killed the
 * process (found by the chaos scenario pg-restart: a delayq process went silent at the crash).
 * On a cluster of the test's own (test/helpers/postgres-cluster.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { isDelayQError } from '../../../src/core/errors.js';
import { DelayQueue } from '../../../src/open-queue.js';
import { startCluster, type PgCluster } from '../../helpers/postgres-cluster.js';

describe('postgres store: the server crashes while a transaction of the store is open', () => {
  let cluster: PgCluster;
  before(async () => {
    cluster = await startCluster();
  });
  after(() => cluster.remove());

  it('rejects the call with STORE_UNAVAILABLE, and the process survives and works after the restart', { timeout: 60_000 }, async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown): void => void uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    const q = await DelayQueue.open({ store: `${cluster.url}?schema=midtx` });
    const holder = new pg.Client({ connectionString: cluster.url });
    holder.on('error', () => undefined);
    try {
      await q.schedule({ id: 'held', topic: 't', payload: null, delayMs: 60_000 });
      await holder.connect();
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM midtx.tasks WHERE id = $1 FOR UPDATE', ['held']);
      // The store's reschedule transaction waits on that row lock, its client checked out.
      const rescheduled = q.reschedule('held', { delayMs: 120_000 }).then(
        () => null,
        (error: unknown) => error,
      );
      await sleep(300);
      cluster.crash();
      const error = await rescheduled;
      // The connection's end is emitted a tick after the query's error.
      await sleep(200);
      assert.deepEqual(uncaught, [], 'no uncaught exception');
      assert.ok(isDelayQError(error, 'STORE_UNAVAILABLE'), `rejected with ${String(error)}`);
      cluster.start();
      const deadline = Date.now() + 20_000;
      for (;;) {
        try {
          await q.schedule({ id: 'after', topic: 't', payload: null, delayMs: 60_000 });
          break;
        } catch (retry) {
          if (Date.now() > deadline) throw retry;
          await sleep(200);
        }
      }
      assert.equal((await q.get('after'))?.state, 'pending');
    } finally {
      process.off('uncaughtException', onUncaught);
      await holder.end().catch(() => undefined);
      await q.close();
    }
  });
});
