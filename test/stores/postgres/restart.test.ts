/**
 * The PostgreSQL server crashes (`pg_ctl stop -m immediate`) and comes back while a queue
 * schedules and delivers on it: calls made while it is down reject with STORE_UNAVAILABLE,
 * the queue reconnects by itself (pool, LISTEN connection, leases), and every task whose
 * schedule() resolved is delivered, none before its runAt. On a cluster of the test's own
 * (test/helpers/postgres-cluster.ts), never the machine's server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDelayQError, type DelayQError } from '../../../src/core/errors.js';
import { DelayQueue } from '../../../src/open-queue.js';
import { startCluster, type PgCluster } from '../../helpers/postgres-cluster.js';

describe('postgres store: the server crashes and restarts under load', () => {
  let cluster: PgCluster;
  before(async () => {
    cluster = await startCluster();
  });
  after(() => cluster.remove());

  it('rejects with STORE_UNAVAILABLE while down, reconnects by itself, and delivers every acknowledged task', { timeout: 120_000 }, async (t) => {
    const q = await DelayQueue.open({ store: `${cluster.url}?schema=faults` });
    const acknowledged = new Map<string, number>();
    const delivered = new Map<string, number>();
    const early: string[] = [];
    const refused: unknown[] = [];
    q.work(
      'faults',
      (d) => {
        const at = Date.now();
        if (at < d.runAt) early.push(d.id);
        if (!delivered.has(d.id)) delivered.set(d.id, at);
      },
      { concurrency: 20 },
    );
    let n = 0;
    let loading = true;
    const load = (async () => {
      while (loading) {
        const batch = Array.from({ length: 10 }, () => {
          const id = `f-${n++}`;
          return { id, topic: 'faults', payload: null, runAt: Date.now() + 200 + (n % 7) * 150, ttrMs: 2_000 };
        });
        await Promise.all(
          batch.map((task) =>
            q.schedule(task).then(
              () => void acknowledged.set(task.id, task.runAt),
              (error: unknown) => void refused.push(error),
            ),
          ),
        );
        await sleep(20);
      }
    })();
    try {
      await sleep(1_500);
      const beforeCrash = acknowledged.size;
      cluster.crash();
      await sleep(2_000);
      const whileDown = refused.length;
      cluster.start();
      await sleep(3_000);
      loading = false;
      await load;
      t.diagnostic(`${acknowledged.size} acknowledged (${beforeCrash} before the crash), ${refused.length} refused`);
      assert.ok(beforeCrash > 0, 'scheduled before the crash');
      assert.ok(whileDown > 0, 'calls made while the server was down were refused');
      for (const error of refused) assert.ok(isDelayQError(error, 'STORE_UNAVAILABLE'), `refused with ${String((error as DelayQError).code ?? error)}`);
      assert.ok(acknowledged.size > beforeCrash, 'scheduling works again after the restart, with no reopen');

      const deadline = Date.now() + 60_000;
      while ([...acknowledged.keys()].some((id) => !delivered.has(id)) && Date.now() < deadline) await sleep(100);
      const missing = [...acknowledged.keys()].filter((id) => !delivered.has(id));
      assert.deepEqual(missing, [], 'every acknowledged task delivered');
      assert.deepEqual(early, [], 'none before its runAt');
      const latest = Math.max(...[...acknowledged].map(([id, runAt]) => delivered.get(id)! - runAt));
      t.diagnostic(`latest delivery ${latest} ms after its runAt`);
    } finally {
      loading = false;
      await load;
      await q.close();
    }
  });
});
