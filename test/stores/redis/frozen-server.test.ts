/**
 * A Redis that hangs (SIGSTOPped: its connections stay open, nothing answers): calls reject
 * with STORE_UNAVAILABLE once `callTimeoutMs` passes instead of waiting for as long as TCP
 * takes to give up, and once it runs again the queue carries on by itself and delivers what
 * was acknowledged, none early. A redis-server of the test's own, stopped by its PID.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DelayQueue } from '../../../src/open-queue.js';
import { redisSkip, startRedis, type RedisServer } from '../../helpers/redis-servers.js';
import { refusalsOf, watchDeliveries } from '../../helpers/outage.js';
import { untilResolved } from '../../helpers/retry.js';

const skip = redisSkip();
const CALL_TIMEOUT_MS = 500;
/**
 * A command in flight when the server froze times out here but runs there once it wakes:
 * a reserve then holds its tasks for nobody until their ttr runs out and the recoverer
 * expires them, as if their consumer had died. A short ttr keeps that quick.
 */
const TTR_MS = 1_000;

function big(): { id: string; topic: string; payload: null; delayMs: number; ttrMs: number }[] {
  return Array.from({ length: 1_200 }, (_, i) => ({ id: `big-${i}`, topic: 'frozen', payload: null, delayMs: 100, ttrMs: TTR_MS }));
}

describe('redis store: the server hangs', { skip }, () => {
  let server: RedisServer | undefined;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    server?.resume();
    await server?.stop();
    server?.remove();
  });

  it('fails calls after callTimeoutMs while it hangs, and carries on by itself once it answers again', { timeout: 90_000 }, async () => {
    const q = await DelayQueue.open({ store: `${server!.url}?prefix=frozen&shards=4&callTimeoutMs=${CALL_TIMEOUT_MS}` });
    const deliveries = watchDeliveries(q, 'frozen');
    try {
      await q.schedule({ id: 'before', topic: 'frozen', payload: null, delayMs: 0, ttrMs: TTR_MS });
      server!.pause();
      let resumed = false;
      try {
        const started = Date.now();
        // A write, a batch over every shard, a read.
        const refusals = await refusalsOf(
          [() => q.schedule({ id: 'during', topic: 'frozen', payload: null, delayMs: 100, ttrMs: TTR_MS }), () => q.scheduleMany(big()), () => q.stats()],
          'a call to a hung server resolved',
        );
        // Without callTimeoutMs the first of them waited until the server woke.
        assert.ok(Date.now() - started < 15_000, `the calls took ${Date.now() - started} ms`);
        for (const refusal of refusals) {
          assert.equal(refusal.code, 'STORE_UNAVAILABLE', refusal.message);
          assert.match(refusal.message, /no answer within the call timeout \(callTimeoutMs\)/);
        }
        server!.resume();
        resumed = true;
      } finally {
        if (!resumed) server!.resume();
      }
      // Sending again is safe whether or not the first attempt ran.
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
