/**
 * Every connection of a queue ended with pg_terminate_backend, over and over, while it
 * schedules and delivers (the chaos cell pg-backend-kill, in one process): the process lives
 * on (a termination that reached a pooled client nobody listened on ended it: 5 runs of 5 of
 * the cell), each call succeeds or rejects with STORE_UNAVAILABLE, and every task whose
 * schedule() resolved is delivered, none before its runAt. On a cluster of the test's own
 * (test/helpers/postgres-cluster.ts): terminating backends on the machine's server would end
 * other tests' connections.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { isDelayQError } from '../../../src/core/errors.js';
import { DelayQueue } from '../../../src/open-queue.js';
import { startCluster, type PgCluster } from '../../helpers/postgres-cluster.js';

describe('postgres store: its connections terminated over and over', () => {
  let cluster: PgCluster;
  before(async () => {
    cluster = await startCluster();
  });
  after(() => cluster.remove());

  it('lives on, rejects only with STORE_UNAVAILABLE, and delivers every acknowledged task', { timeout: 120_000 }, async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown): void => void uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    const q = await DelayQueue.open({ store: `${cluster.url}?schema=storm&callTimeoutMs=2000` });
    const killer = new pg.Client({ connectionString: cluster.url, application_name: 'killer' });
    await killer.connect();
    const acknowledged = new Map<string, number>();
    const delivered = new Set<string>();
    const early: string[] = [];
    const refused: unknown[] = [];
    q.work(
      'storm',
      (d) => {
        if (Date.now() < d.runAt) early.push(d.id);
        delivered.add(d.id);
      },
      { concurrency: 50 },
    );
    let n = 0;
    let loading = true;
    const load = (async () => {
      while (loading) {
        const tasks = Array.from({ length: 50 }, () => ({ id: `s-${n++}`, topic: 'storm', payload: null, runAt: Date.now() + 100 + (n % 5) * 100, ttrMs: 1_500 }));
        await q.scheduleMany(tasks).then(
          () => tasks.forEach((t) => acknowledged.set(t.id, t.runAt)),
          (error: unknown) => void refused.push(error),
        );
        await sleep(25);
      }
    })();
    let kills = 0;
    try {
      await sleep(1_000);
      for (const stop = Date.now() + 8_000; Date.now() < stop; ) {
        const { rows } = await killer.query<{ ended: boolean }>(
          `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
            WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND application_name <> 'killer'`,
        );
        kills += rows.filter((r) => r.ended).length;
        await sleep(100);
      }
      loading = false;
      await load;
      const deadline = Date.now() + 30_000;
      while ([...acknowledged.keys()].some((id) => !delivered.has(id)) && Date.now() < deadline) await sleep(100);
    } finally {
      loading = false;
      await load;
      await killer.end();
      await q.close();
      process.off('uncaughtException', onUncaught);
    }
    assert.deepEqual(uncaught, [], 'no error event went unheard');
    assert.ok(kills > 50, `backends terminated: ${kills}`);
    assert.ok(acknowledged.size > 1_000, `schedules acknowledged: ${acknowledged.size}`);
    const wrong = refused.filter((e) => !isDelayQError(e) || e.code !== 'STORE_UNAVAILABLE');
    assert.deepEqual(wrong, [], 'every rejection is STORE_UNAVAILABLE');
    assert.deepEqual([...acknowledged.keys()].filter((id) => !delivered.has(id)), [], 'every acknowledged task delivered');
    assert.deepEqual(early, []);
  });
});
