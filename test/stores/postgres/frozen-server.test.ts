/**
 * A server that hangs (every process of it SIGSTOPped: connections stay open, nothing
 * answers): calls reject with STORE_UNAVAILABLE once `callTimeoutMs` passes instead of
 * waiting for as long as TCP takes to give up, and once the server runs again the queue
 * carries on by itself and delivers what was acknowledged. On a cluster of the test's own
 * (test/helpers/postgres-cluster.ts), never the machine's server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DelayQueue } from '../../../src/open-queue.js';
import { startCluster, type PgCluster } from '../../helpers/postgres-cluster.js';
import { refusalsOf, watchDeliveries } from '../../helpers/outage.js';
import { untilResolved } from '../../helpers/retry.js';

const CALL_TIMEOUT_MS = 500;
/**
 * A reserve in flight when the server froze times out here but runs there once it wakes:
 * its tasks are reserved for nobody until their ttr runs out and the recoverer expires
 * them (2 s later, every 5 s), as if their consumer had died. A short ttr keeps that quick.
 */
const TTR_MS = 1_000;

describe('postgres store: the server hangs', () => {
  let cluster: PgCluster;
  before(async () => {
    cluster = await startCluster();
  });
  after(() => cluster.remove());

  it('fails calls after callTimeoutMs while it hangs, and carries on by itself once it answers again', { timeout: 90_000 }, async () => {
    const q = await DelayQueue.open({ store: `${cluster.url}?schema=frozen&callTimeoutMs=${CALL_TIMEOUT_MS}` });
    const deliveries = watchDeliveries(q, 'frozen');
    try {
      // Due at once: its reserve is likely in flight when the server freezes (see TTR_MS).
      await q.schedule({ id: 'before', topic: 'frozen', payload: null, delayMs: 0, ttrMs: TTR_MS });
      cluster.freeze();
      let thawed = false;
      try {
        const started = Date.now();
        // One statement (a schedule), a transaction (more tasks than one statement carries), a read.
        const refusals = await refusalsOf(
          [() => q.schedule({ id: 'during', topic: 'frozen', payload: null, delayMs: 100, ttrMs: TTR_MS }), () => q.scheduleMany(big()), () => q.stats()],
          'a call to a hung server resolved',
        );
        // Three calls, each failing within about twice its timeout (bounded loosely: the host may be busy), not the hours TCP would take.
        assert.ok(Date.now() - started < 20_000, `the calls took ${Date.now() - started} ms`);
        for (const refusal of refusals) {
          assert.equal(refusal.code, 'STORE_UNAVAILABLE', refusal.message);
          assert.match(refusal.message, new RegExp(`no (answer|connection) within ${CALL_TIMEOUT_MS} ms \\(callTimeoutMs\\)`));
        }
        cluster.thaw();
        thawed = true;
      } finally {
        if (!thawed) cluster.thaw();
      }
      // Calling again is safe whether or not the first attempt reached the server.
      const deadline = Date.now() + 30_000;
      await untilResolved(() => q.schedule({ id: 'during', topic: 'frozen', payload: null, delayMs: 100, ttrMs: TTR_MS }), deadline);
      await untilResolved(() => q.scheduleMany(big()), deadline);
      await untilResolved(() => q.schedule({ id: 'after', topic: 'frozen', payload: null, delayMs: 100, ttrMs: TTR_MS }), deadline);
      const want = ['before', 'during', 'after', ...big().map((t) => t.id)];
      await deliveries.untilDelivered(want, deadline);
      assert.deepEqual(deliveries.early, []);
    } finally {
      await q.close();
    }
  });
});

function big(): { id: string; topic: string; payload: null; delayMs: number; ttrMs: number }[] {
  return Array.from({ length: 2_500 }, (_, i) => ({ id: `big-${i}`, topic: 'frozen', payload: null, delayMs: 100, ttrMs: TTR_MS }));
}
