/**
 * DelayQueue.extend, on an injected clock: a pull consumer's reservation extended runs out
 * at its new end (the ttr timer this process holds moves there), and a timer that fires
 * before an extension made elsewhere is placed again at the new end (the store answers the
 * expiry `held`), never expiring a reservation in force.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import { T0, flush, openManual } from '../helpers/engine.js';

describe('extend', () => {
  it('moves a pull reservation to now + ttrMs: it runs out at the new end, not before', async () => {
    const { q, clock } = await openManual();
    try {
      await q.schedule({ id: 'a', topic: 'pull', ttrMs: 1_000 });
      const [delivery] = await q.reserve('pull');
      assert.equal(delivery?.reservedUntil, T0 + 1_000);
      clock.advance(800);
      assert.deepEqual(await q.extend('a', delivery.receipt, { ttrMs: 1_000 }), { reservedUntil: T0 + 1_800 });
      clock.advance(900); // past the first end (T0 + 1 000)
      await flush();
      assert.deepEqual([(await q.get('a'))?.state, (await q.get('a'))?.attempts], ['reserved', 1], 'not expired at its first end');
      // Without ttrMs: the task's own (1 s) from now.
      assert.deepEqual(await q.extend('a', delivery.receipt), { reservedUntil: T0 + 2_700 });
      clock.advance(1_000);
      await flush();
      const after = await q.get('a');
      assert.deepEqual([after?.state, after?.history.map((e) => e.outcome)], ['pending', ['expired']], 'expired at its new end');
      await assert.rejects(q.extend('a', delivery.receipt), (e: unknown) => isDelayQError(e, 'STALE_RECEIPT'));
    } finally {
      await q.close();
    }
  });

  it('refuses what is not a reservation in force with a typed error, and a bad call before the store', async () => {
    const { q, clock } = await openManual();
    try {
      await q.schedule({ id: 'a', topic: 'pull', ttrMs: 1_000 });
      const [delivery] = await q.reserve('pull');
      await assert.rejects(q.extend('a', `${delivery!.receipt}x`), (e: unknown) => isDelayQError(e, 'STALE_RECEIPT'));
      await assert.rejects(q.extend('nope', delivery!.receipt), (e: unknown) => isDelayQError(e, 'TASK_NOT_FOUND'));
      await assert.rejects(q.extend('a', delivery!.receipt, { ttrMs: 0 }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
      await assert.rejects(q.extend('a', delivery!.receipt, { ttrMs: 25 * 3600_000 }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
      await assert.rejects(q.extend('a', ''), (e: unknown) => isDelayQError(e));
      // Run out (nobody expired it yet: the timer has not fired): lost all the same.
      clock.advanceTo(T0 + 1_000);
      await assert.rejects(q.extend('a', delivery!.receipt, { ttrMs: 5_000 }), (e: unknown) => isDelayQError(e, 'STALE_RECEIPT'));
    } finally {
      await q.close();
    }
  });

  it('places the ttr timer again at the new end when an extension made elsewhere left it at the old one', async () => {
    const { q, clock } = await openManual();
    try {
      await q.schedule({ id: 'a', topic: 'pull', ttrMs: 1_000 });
      const [delivery] = await q.reserve('pull');
      // Straight to the store, as another process would: this queue's timer stays at T0 + 1 000.
      await q.store.tasks.extend([{ id: 'a', receipt: delivery!.receipt, ttrMs: 5_000 }], T0 + 500);
      clock.advance(1_000);
      await flush();
      assert.equal((await q.get('a'))?.state, 'reserved', 'held: the expiry at the old end changed nothing');
      clock.advance(4_400);
      await flush();
      assert.equal((await q.get('a'))?.state, 'reserved');
      clock.advance(100); // T0 + 5 500, the new end
      await flush();
      assert.equal((await q.get('a'))?.state, 'pending', 'expired at the new end by the timer placed again');
    } finally {
      await q.close();
    }
  });
});
