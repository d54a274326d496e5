/**
 * A timer message that never reaches the shard's owner. A task scheduled into a shard that
 * another process owns reaches that owner's wheel only through the timers channel (pub/sub,
 * at most once), and the owner's loader reads forward from its load target, never below it.
 * On a Redis Cluster the message is lost when the node that took the PUBLISH dies before
 * its cluster bus passed it on, or while ioredis moves the owner's subscriber to another node
 * (which emits no 'ready', so no reload follows): the task stayed pending, due, in no wheel
 * and no ready list, until its shard changed hands (chaos: "a master down, waitReplicas=1").
 * The owner's recoverer finds such tasks among its shards' overdue pending timers.
 *
 * Here the producer's Redis user may not PUBLISH (an ACL), so each of its timer messages is lost.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DelayQueue } from '../../../src/open-queue.js';
import { redisSkip, redisWithMuteUser } from '../../helpers/redis-servers.js';

const skip = redisSkip();

describe('redis: a timer message lost on its way to the shard owner', { skip }, () => {
  const redis = redisWithMuteUser();

  it('the owner delivers the task anyway, a little late', { timeout: 30_000 }, async () => {
    // One shard: the first process holds it (its share is 1 of 1 whatever the other does), the second owns nothing.
    const storeOptions = { prefix: 'lost', shards: 1 };
    const owner = await DelayQueue.open({ store: redis.url, storeOptions });
    const producer = await DelayQueue.open({ store: redis.muteUrl, storeOptions });
    try {
      const runAt = Date.now() + 100;
      await producer.schedule({ id: 'lost-1', topic: 'lost', payload: null, runAt });
      const deadline = Date.now() + 10_000;
      let delivered: { id: string; at: number } | null = null;
      while (delivered === null && Date.now() < deadline) {
        const [delivery] = await owner.reserve('lost', { max: 1, waitMs: 500 });
        if (delivery !== undefined) {
          delivered = { id: delivery.id, at: Date.now() };
          await owner.ack(delivery.id, delivery.receipt);
        }
      }
      assert.ok(delivered !== null, 'the task was delivered (its timer message never came)');
      assert.equal(delivered.id, 'lost-1');
      assert.ok(delivered.at >= runAt, 'not before its runAt');
    } finally {
      await producer.close();
      await owner.close();
    }
  });
});
