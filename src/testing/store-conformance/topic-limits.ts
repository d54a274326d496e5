/**
 * The store suite's cases of topic flow limits (runStoreConformance, ./index.ts; ADR 0043):
 * the limits kept and versioned, and admissions that follow the rules of
 * core/flow/token-bucket.ts and flow-ledger.ts. Every store is compared with FlowLedger, the
 * rules as written, on the same calls.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlowLedger } from '../../core/flow/flow-ledger.js';
import type { TopicLimits } from '../../core/flow/limits.js';
import type { TaskStore } from '../../core/ports/index.js';
import { T0 } from './fixtures.js';

const RATE: TopicLimits = { rate: 10, periodMs: 1_000, burst: 5, concurrency: null };
const CONCURRENCY: TopicLimits = { rate: null, periodMs: 1_000, burst: 1, concurrency: 3 };
const BOTH: TopicLimits = { rate: 100, periodMs: 1_000, burst: 4, concurrency: 2 };

/** `store` is the store of the case running: a fresh one for each. */
export function topicLimitCases(store: TaskStore): void {
  describe('topic flow limits', () => {
    it('a fresh store has no limited topic', async () => {
      assert.deepEqual({ ...(await store.topicLimits()).limits }, {});
    });

    it('set, change and clear move the version; setting the same limits again changes nothing', async () => {
      const v0 = (await store.topicLimits()).version;
      assert.equal(await store.setTopicLimits('mail', RATE), true);
      assert.equal(await store.setTopicLimits('billing', CONCURRENCY), true);
      const set = await store.topicLimits();
      assert.deepEqual(Object.keys(set.limits), ['billing', 'mail']);
      assert.deepEqual(set.limits['mail'], RATE);
      assert.deepEqual(set.limits['billing'], CONCURRENCY);
      assert.notEqual(set.version, v0);

      assert.equal(await store.setTopicLimits('mail', RATE), false);
      assert.equal(await store.setTopicLimits('mail', BOTH), true);
      assert.deepEqual((await store.topicLimits()).limits['mail'], BOTH);

      assert.equal(await store.setTopicLimits('mail', null), true);
      assert.equal(await store.setTopicLimits('mail', null), false);
      const cleared = await store.topicLimits();
      assert.deepEqual(Object.keys(cleared.limits), ['billing']);
      assert.notEqual(cleared.version, set.version);
    });

    it('a rate: a new bucket is full, takes whole tokens, refills with time, and says when the next token comes', async () => {
      const model = new FlowLedger();
      const steps: [number, number][] = [
        [0, 8],
        [0, 1],
        [250, 8],
        [260, 1],
        [300, 3],
        [5_000, 20],
      ];
      for (const [at, want] of steps) {
        const got = await store.admitFlow('mail', RATE, want, `h${at}`, T0 + at + 10_000, T0 + at);
        assert.deepEqual(got, model.admit('mail', RATE, want, `h${at}`, T0 + at + 10_000, T0 + at), `admit ${want} at +${at}`);
      }
      // The steps above: 5 granted at once, then none until +100; at +250 two, at +300 one.
      assert.equal((await store.admitFlow('mail', RATE, 9, 'x', T0 + 20_000, T0 + 5_000)).granted, 0);
    });

    it('unused tokens go back, never past burst', async () => {
      const first = await store.admitFlow('mail', RATE, 5, 'a', T0 + 10_000, T0);
      assert.equal(first.granted, 5);
      await store.bindFlow('mail', RATE, 'a', 3, [], T0 + 10);
      assert.equal((await store.admitFlow('mail', RATE, 10, 'b', T0 + 10_000, T0 + 10)).granted, 3);
      await store.bindFlow('mail', RATE, 'b', 3, [], T0 + 2_000);
      // Refilled to 5 by +2000, then 3 given back: still 5.
      assert.equal((await store.admitFlow('mail', RATE, 10, 'c', T0 + 10_000, T0 + 2_000)).granted, 5);
    });

    it('a concurrency: slots are taken by admissions, become the deliveries, and are freed by release or when they run out', async () => {
      const a = await store.admitFlow('jobs', CONCURRENCY, 5, 'a', T0 + 1_000, T0);
      assert.deepEqual(a, { granted: 3, retryAt: 0 });
      assert.equal((await store.admitFlow('jobs', CONCURRENCY, 1, 'b', T0 + 1_000, T0)).granted, 0);
      // Two reserved: their slots are held until their reservations end; the third is given up.
      await store.bindFlow('jobs', CONCURRENCY, 'a', 1, [{ id: 't1', until: T0 + 30_000 }, { id: 't2', until: T0 + 5_000 }], T0 + 5);
      assert.equal((await store.admitFlow('jobs', CONCURRENCY, 5, 'c', T0 + 1_000, T0 + 10)).granted, 1);
      await store.bindFlow('jobs', CONCURRENCY, 'c', 1, [], T0 + 10);
      await store.releaseFlow('jobs', ['t1', 'unknown']);
      assert.equal((await store.admitFlow('jobs', CONCURRENCY, 5, 'd', T0 + 1_000, T0 + 20)).granted, 2);
      await store.bindFlow('jobs', CONCURRENCY, 'd', 2, [], T0 + 20);
      // t2's reservation ran out at +5000: its slot counts no more.
      assert.equal((await store.admitFlow('jobs', CONCURRENCY, 5, 'e', T0 + 10_000, T0 + 5_000)).granted, 3);
    });

    it('an admission held past its time counts no more, and binding it later holds nothing', async () => {
      assert.equal((await store.admitFlow('jobs', CONCURRENCY, 3, 'a', T0 + 1_000, T0)).granted, 3);
      assert.equal((await store.admitFlow('jobs', CONCURRENCY, 3, 'b', T0 + 5_000, T0 + 1_000)).granted, 3);
      await store.bindFlow('jobs', CONCURRENCY, 'a', 0, [{ id: 'late', until: T0 + 60_000 }], T0 + 1_500);
      await store.bindFlow('jobs', CONCURRENCY, 'b', 3, [], T0 + 1_500);
      assert.equal((await store.admitFlow('jobs', CONCURRENCY, 5, 'c', T0 + 5_000, T0 + 1_600)).granted, 3);
    });

    it('rate and concurrency together: the tighter one decides, and tokens not granted for want of a slot stay', async () => {
      const model = new FlowLedger();
      const calls: [string, number, number][] = [
        ['a', 3, 0],
        ['b', 3, 1],
      ];
      for (const [holder, want, at] of calls) {
        const got = await store.admitFlow('both', BOTH, want, holder, T0 + 30_000, T0 + at);
        assert.deepEqual(got, model.admit('both', BOTH, want, holder, T0 + 30_000, T0 + at), holder);
      }
      await store.releaseFlow('both', ['nothing']);
      await store.bindFlow('both', BOTH, 'a', 0, [{ id: 'x', until: T0 + 30_000 }, { id: 'y', until: T0 + 30_000 }], T0 + 2);
      model.bind('both', BOTH, 'a', 0, [{ id: 'x', until: T0 + 30_000 }, { id: 'y', until: T0 + 30_000 }], T0 + 2);
      await store.releaseFlow('both', ['x']);
      model.release('both', ['x']);
      const got = await store.admitFlow('both', BOTH, 3, 'c', T0 + 30_000, T0 + 3);
      assert.deepEqual(got, model.admit('both', BOTH, 3, 'c', T0 + 30_000, T0 + 3));
      assert.equal(got.granted, 1);
    });

    it('topics are limited apart', async () => {
      assert.equal((await store.admitFlow('one', RATE, 9, 'a', T0 + 1_000, T0)).granted, 5);
      assert.equal((await store.admitFlow('two', RATE, 9, 'a', T0 + 1_000, T0)).granted, 5);
    });
  });
}
