/**
 * A due task whose notices are lost is still delivered, to a consumer in a process that does
 * not own its shard, within what the safety nets promise. Two notices carry a task scheduled
 * by one process into a shard another owns: the producer's timers PUBLISH (to the owner's
 * wheel, remote-timers.ts) and the owner's ready PUBLISH (promote.lua, to the consumers).
 * Each is made to fail by a Redis user without the PUBLISH permission (an ACL): promote.lua
 * runs its PUBLISH as that user, the producer's timer-backend.ts too.
 *
 * The nets: a consumer that waits re-checks every shard every SWEEP_MS (ready-waiters.ts;
 * a lost ready notice), and the owner promotes pending tasks RECOVER_GRACE_MS overdue after
 * a lease tick (overdue-recoverer.ts; a lost timer notice). Each case names its bound.
 *
 * The consumer polls as clients do, short reserve calls one after the other (waitMs below
 * SWEEP_MS), or calls that do not wait at all: the sweep must reach it all the same.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { DelayQueue } from '../../../src/open-queue.js';
import { consumeUntil, type Delivered } from '../../helpers/lost-notices.js';
import { redisSkip, redisWithMuteUser } from '../../helpers/redis-servers.js';

const skip = redisSkip();

/** The store's nets (src/stores/redis: index.ts SWEEP_MS, overdue-recoverer.ts RECOVER_GRACE_MS, lease-keeper tick = LEASE_MS / 5). */
const SWEEP_MS = 2_000;
const RECOVER_GRACE_MS = 2_000;
const LEASE_TICK_MS = 1_000;
/** Scheduling, the wheel, a promotion retry and the reserve round trips on a loaded machine. */
const MARGIN_MS = 1_500;
/** After the delivery, polled this long (more than a sweep) for a second one. */
const WATCH_MORE_MS = SWEEP_MS + 500;
/** The consumer's reserve calls: short long-polls, as the HTTP clients make. */
const POLL_MS = 500;
/** A consumer that does not wait (waitMs 0) calls this often. */
const NO_WAIT_PAUSE_MS = 200;

describe('redis: a due task whose notices are lost', { skip }, () => {
  const redis = redisWithMuteUser();
  const mute = (): string => redis.muteUrl;

  /**
   * One shard, held by the first queue opened (its share is 1 of 1 whatever the other does);
   * the second owns nothing, schedules and consumes. Separate stores, separate connections.
   */
  async function run(t: TestContext, prefix: string, urls: { owner: string; other: string }, producer: 'owner' | 'other', boundMs: number, waitMs = POLL_MS): Promise<void> {
    const storeOptions = { prefix, shards: 1 };
    const owner = await DelayQueue.open({ store: urls.owner, storeOptions });
    const other = await DelayQueue.open({ store: urls.other, storeOptions }).catch(async (error: unknown) => {
      await owner.close();
      throw error;
    });
    let runAt: number;
    let seen: Delivered[];
    try {
      // The consumer listens before the task falls due (its subscriber has the topic).
      await other.reserve('lost', { max: 1, waitMs: 1 });
      runAt = Date.now() + 300;
      await (producer === 'owner' ? owner : other).schedule({ id: `${prefix}-1`, topic: 'lost', payload: null, runAt });
      seen = await consumeUntil(other, 'lost', { until: runAt + boundMs, watchMoreMs: WATCH_MORE_MS, waitMs, noWaitPauseMs: NO_WAIT_PAUSE_MS });
    } finally {
      await other.close();
      await owner.close();
    }
    const delay = seen[0] === undefined ? null : seen[0].at - runAt;
    t.diagnostic(`${prefix}: delivered ${seen.length} time(s), ${delay === null ? 'never' : `${delay} ms after runAt`} (bound ${boundMs} ms)`);
    assert.equal(seen.length, 1, `delivered exactly once within ${boundMs} ms of runAt (got ${seen.length})`);
    assert.equal(seen[0]!.id, `${prefix}-1`);
    assert.ok(delay! >= 0, `not before its runAt (${delay} ms)`);
    assert.ok(delay! <= boundMs, `within ${boundMs} ms of runAt (${delay} ms)`);
  }

  it('(a) the ready PUBLISH of the owner is lost: the consumer sweep finds the task', { timeout: 30_000 }, async (t) => {
    // The owner promotes on time; promote.lua's PUBLISH fails, after the task went to the ready list.
    await run(t, 'lost-ready', { owner: mute(), other: redis.url }, 'owner', SWEEP_MS + MARGIN_MS);
  });

  it('(a) with a consumer that does not wait (waitMs 0): its calls sweep too', { timeout: 30_000 }, async (t) => {
    await run(t, 'lost-ready-nowait', { owner: mute(), other: redis.url }, 'owner', SWEEP_MS + MARGIN_MS, 0);
  });

  it('(b) the timers PUBLISH of the producer is lost: the owner recovers the overdue task', { timeout: 30_000 }, async (t) => {
    // The owner's next lease tick after RECOVER_GRACE_MS promotes it, and its PUBLISH arrives.
    await run(t, 'lost-timer', { owner: redis.url, other: mute() }, 'other', RECOVER_GRACE_MS + LEASE_TICK_MS + MARGIN_MS);
  });

  it('(c) both are lost: the owner recovers the task, the consumer sweep finds it', { timeout: 30_000 }, async (t) => {
    await run(t, 'lost-both', { owner: mute(), other: mute() }, 'other', RECOVER_GRACE_MS + LEASE_TICK_MS + SWEEP_MS + MARGIN_MS);
  });
});
