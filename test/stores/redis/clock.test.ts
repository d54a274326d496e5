/**
 * The Redis store reads no clock of its own: the store openRedisStore builds runs its
 * background loops (lease ticks, the kept-task release) on the Clock it is given. Under a
 * ManualClock they run when, and only when, that clock is advanced. Real parts otherwise: a
 * redis-server. (Redis's own PX expiry of the leases is real time, 4 s: each case takes far
 * less.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManualClock } from '../../../src/core/manual-clock.js';
import { openRedisStore } from '../../../src/stores/redis/index.js';
import { KEEP_MS } from '../../../src/stores/redis/kept-releaser.js';
import { buildKeyspace } from '../../../src/stores/redis/keys.js';
import { task } from '../../../src/testing/store-conformance/index.js';
import { redisSkip } from '../../helpers/redis-servers.js';
import { redisForSuite } from '../../helpers/redis-suite.js';

const skip = redisSkip();

/** Waits (a few ms at a time, 5 s at most) for the effect of an asynchronous Redis call. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await sleep(10);
  }
  assert.fail(`timed out waiting for ${what}`);
}

describe('redis store on an injected clock', () => {
  describe('with a redis-server', { skip }, () => {
    const redis = redisForSuite();

    it('ticks its shard leases when the clock is advanced, not before', async () => {
      const clock = new ManualClock();
      const start = clock.now();
      const store = await openRedisStore(redis.server.url, { prefix: 'clock-lease', shards: 2, clock });
      try {
        const members = buildKeyspace('clock-lease', 2).members;
        const heartbeat = async (): Promise<number> => Number((await redis.admin.zrange(members, 0, -1, 'WITHSCORES'))[1]);
        // The first tick, at open: the heartbeat runs out a tick (1 s) short of the 5 s lease.
        assert.equal(await heartbeat(), start + 4_000);
        clock.advance(999);
        await sleep(50);
        assert.equal(await heartbeat(), start + 4_000, 'no tick before its time on the store clock');
        clock.advance(1);
        await eventually(async () => (await heartbeat()) === start + 5_000, 'the tick at +1 s');
      } finally {
        await store.close();
      }
      assert.equal(await redis.admin.zcard(buildKeyspace('clock-lease', 2).members), 0, 'a clean close leaves the namespace');
    });

    it('gives back kept tasks no consumer took once KEEP_MS has passed on the clock', async () => {
      const clock = new ManualClock();
      const store = await openRedisStore(redis.server.url, { prefix: 'clock-keep', shards: 1, clock });
      try {
        const shared = store.coordination;
        assert.ok(shared !== null);
        const now = clock.now();
        const outcomes = await store.tasks.schedule(
          Array.from({ length: 10 }, (_, i) => task(`k-${i}`, { topic: 'keep', runAt: now })),
          now,
        );
        // No consumer asks yet: the promotion puts all ten in the shared ready list.
        await shared.promote(
          outcomes.map((o) => o.ref!),
          now,
        );
        // One asked for, the rest of the prefetch kept for the next call of the topic.
        const [first, ...none] = await shared.reserveReady('keep', 1, () => clock.now(), undefined, new AbortController().signal);
        assert.equal(first?.id, 'k-0');
        assert.deepEqual(none, []);
        const reserved = async (): Promise<number> => (await store.tasks.stats()).byState.reserved;
        assert.equal(await reserved(), 10);
        clock.advance(KEEP_MS - 1);
        // Longer than KEEP_MS of real time: a release on a timer of its own would have run.
        await sleep(KEEP_MS + 50);
        assert.equal(await reserved(), 10, 'kept until KEEP_MS has passed on the store clock');
        clock.advance(1);
        await eventually(async () => (await reserved()) === 1, 'the release of the nine kept tasks');
        assert.equal((await store.tasks.stats()).byState.pending, 9);
        assert.equal((await store.tasks.get('k-5'))?.attempts, 0, 'a kept task given back is not counted as an attempt');
      } finally {
        await store.close();
      }
    });
  });
});
