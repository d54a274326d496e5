/** The store suite's cases of "push subscriptions" (runStoreConformance, ./index.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { T0, pushSubscription } from './fixtures.js';

/** `store` is the store of the case running: a fresh one for each. */
export function pushSubscriptionCases(store: TaskStore): void {
  describe('push subscriptions', () => {
    it('gives back what was put, every field; an unknown topic has none', async () => {
      const orders = pushSubscription('orders');
      await store.push.putPushSubscription(orders);
      assert.deepEqual(await store.push.getPushSubscription('orders'), orders);
      assert.equal(await store.push.getPushSubscription('invoices'), null);
    });

    it('replaces on a second put: url, secrets, headers, limits and updatedAt all change', async () => {
      await store.push.putPushSubscription(pushSubscription('orders'));
      const rotated = pushSubscription('orders', {
        url: 'http://10.1.2.3:8080/hooks?x=1',
        secrets: [
          { secret: `whsec_${Buffer.alloc(24, 2).toString('base64')}`, expiresAt: null },
          { secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`, expiresAt: T0 + 86_400_000 },
        ],
        timeoutMs: 2_500,
        concurrency: 1,
        headers: {},
        updatedAt: T0 + 60_000,
      });
      await store.push.putPushSubscription(rotated);
      assert.deepEqual(await store.push.getPushSubscription('orders'), rotated);
      assert.deepEqual(await store.push.listPushSubscriptions(), [rotated]);
    });

    it('lists every subscription by topic, in ascending order', async () => {
      assert.deepEqual(await store.push.listPushSubscriptions(), []);
      for (const topic of ['orders', 'B', 'a.b:c-d_e', 'invoices', '0']) await store.push.putPushSubscription(pushSubscription(topic));
      assert.deepEqual(
        (await store.push.listPushSubscriptions()).map((s) => s.topic),
        ['0', 'B', 'a.b:c-d_e', 'invoices', 'orders'],
      );
    });

    it('deletes: true when there was one, then false; it is gone from get and list', async () => {
      await store.push.putPushSubscription(pushSubscription('orders'));
      await store.push.putPushSubscription(pushSubscription('invoices'));
      assert.equal(await store.push.deletePushSubscription('orders'), true);
      assert.equal(await store.push.deletePushSubscription('orders'), false);
      assert.equal(await store.push.deletePushSubscription('never'), false);
      assert.equal(await store.push.getPushSubscription('orders'), null);
      assert.deepEqual((await store.push.listPushSubscriptions()).map((s) => s.topic), ['invoices']);
    });

    it('keeps topics of every valid character apart, and names that are object keys too', async () => {
      const topics = ['a.b:c-d_e', 'a.b:c-d_E', '__proto__', 'constructor'];
      for (const [i, topic] of topics.entries()) await store.push.putPushSubscription(pushSubscription(topic, { concurrency: i + 1 }));
      for (const [i, topic] of topics.entries()) assert.equal((await store.push.getPushSubscription(topic))?.concurrency, i + 1, topic);
      assert.deepEqual((await store.push.listPushSubscriptions()).map((s) => [s.topic, s.concurrency]), [
        ['__proto__', 3],
        ['a.b:c-d_E', 2],
        ['a.b:c-d_e', 1],
        ['constructor', 4],
      ]);
      assert.equal(await store.push.deletePushSubscription('a.b:c-d_e'), true);
      assert.equal((await store.push.getPushSubscription('a.b:c-d_E'))?.concurrency, 2);
    });

    it('are not tasks: subscriptions leave stats and list untouched', async () => {
      await store.push.putPushSubscription(pushSubscription('orders'));
      const stats = await store.tasks.stats();
      assert.deepEqual({ ...stats.byTopic }, {});
      assert.deepEqual(await store.tasks.list({ limit: 10 }), []);
    });

    it('rejects subscription calls after close', async () => {
      await store.close();
      await assert.rejects(() => store.push.putPushSubscription(pushSubscription('orders')));
      await assert.rejects(() => store.push.getPushSubscription('orders'));
      await assert.rejects(() => store.push.listPushSubscriptions());
      await assert.rejects(() => store.push.deletePushSubscription('orders'));
    });
  });
}
