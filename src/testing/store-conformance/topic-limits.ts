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
import { T0, task } from './fixtures.js';

const RATE: TopicLimits = { rate: 10, periodMs: 1_000, burst: 5, concurrency: null };
const CONCURRENCY: TopicLimits = { rate: null, periodMs: 1_000, burst: 1, concurrency: 3 };
const BOTH: TopicLimits = { rate: 100, periodMs: 1_000, burst: 4, concurrency: 2 };

/** `store` is the store of the case running: a fresh one for each. */
export function topicLimitCases(store: TaskStore): void {
  describe('topic flow limits', () => {
    it('a fresh store has no limited topic', async () => {
      assert.deepEqual({ ...(await store.topics.topicLimits()).limits }, {});
    });

    it('set, change and clear move the version; setting the same limits again changes nothing', async () => {
      const v0 = (await store.topics.topicLimits()).version;
      assert.equal(await store.topics.setTopicLimits('mail', RATE), true);
      assert.equal(await store.topics.setTopicLimits('billing', CONCURRENCY), true);
      const set = await store.topics.topicLimits();
      assert.deepEqual(Object.keys(set.limits), ['billing', 'mail']);
      assert.deepEqual(set.limits['mail'], RATE);
      assert.deepEqual(set.limits['billing'], CONCURRENCY);
      assert.notEqual(set.version, v0);

      assert.equal(await store.topics.setTopicLimits('mail', RATE), false);
      assert.equal(await store.topics.setTopicLimits('mail', BOTH), true);
      assert.deepEqual((await store.topics.topicLimits()).limits['mail'], BOTH);

      assert.equal(await store.topics.setTopicLimits('mail', null), true);
      assert.equal(await store.topics.setTopicLimits('mail', null), false);
      const cleared = await store.topics.topicLimits();
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
        const got = await store.topics.admitFlow({ topic: 'mail', limits: RATE, want, holder: `h${at}`, holdUntil: T0 + at + 10_000, now: T0 + at });
        assert.deepEqual(got, model.admit({ topic: 'mail', limits: RATE, want, holder: `h${at}`, holdUntil: T0 + at + 10_000, now: T0 + at }), `admit ${want} at +${at}`);
        // Each admission is used whole and bound at once, as a reserve that found its tasks is.
        await store.topics.bindFlow({ topic: 'mail', limits: RATE, holder: `h${at}`, unused: 0, leases: [], now: T0 + at });
        model.bind({ topic: 'mail', limits: RATE, holder: `h${at}`, unused: 0, leases: [], now: T0 + at });
      }
      // The steps above: 5 granted at once, then none until +100; at +250 two, at +300 one; by +5000 full again.
      assert.equal((await store.topics.admitFlow({ topic: 'mail', limits: RATE, want: 9, holder: 'x', holdUntil: T0 + 20_000, now: T0 + 5_000 })).granted, 0);
    });

    it('tokens an admission holds count against the burst until it is bound: the bucket refills only to burst minus them', async () => {
      const model = new FlowLedger();
      const admit = async (holder: string, want: number, at: number, holdUntil = T0 + at + 1_000): Promise<number> => {
        const got = await store.topics.admitFlow({ topic: 'mail', limits: RATE, want, holder, holdUntil, now: T0 + at });
        assert.deepEqual(got, model.admit({ topic: 'mail', limits: RATE, want, holder, holdUntil, now: T0 + at }), `${holder} admits ${want} at +${at}`);
        return got.granted;
      };
      const bind = async (holder: string, unused: number, at: number): Promise<void> => {
        await store.topics.bindFlow({ topic: 'mail', limits: RATE, holder, unused, leases: [], now: T0 + at });
        model.bind({ topic: 'mail', limits: RATE, holder, unused, leases: [], now: T0 + at });
      };
      // a takes the whole burst (5) and waits for tasks; a second later the bucket would be full again.
      assert.equal(await admit('a', 5, 0), 5);
      assert.equal(await admit('b', 5, 900), 0, 'a holds the burst: nothing for b, however long it waited');
      await bind('a', 0, 900);
      assert.equal(await admit('c', 5, 900), 0, 'a used its 5: the time it held them refilled nothing');
      assert.equal(await admit('d', 5, 1_100), 2, 'refilling from when a was bound: 2 tokens in 200 ms');
      await bind('d', 0, 1_100);
      // Unused tokens go back up to burst minus what others hold.
      assert.equal(await admit('e', 5, 2_000), 5);
      assert.equal(await admit('f', 5, 2_300), 0);
      await bind('e', 4, 2_300);
      assert.equal(await admit('g', 9, 2_300), 4, 'e used 1 and gave 4 back');
      await bind('g', 0, 2_300);
      // An admission whose holder dies (never bound) counts until its hold ends, then its tokens are room again.
      assert.equal(await admit('h', 9, 3_000, T0 + 3_200), 5, 'refilled since +2300, up to burst');
      assert.equal(await admit('i', 9, 3_200), 0, 'h holds its tokens up to its end, and ran out just now: dropped after this refill');
      assert.equal(await admit('j', 9, 3_400), 2, 'from +3200, with h gone');
    });

    it('holdFlow adds or moves the slots of deliveries; reservedLeases lists a topic\'s reservations in force, by receipt', async () => {
      await store.topics.holdFlow('jobs', [{ key: 'x', until: T0 + 5_000 }, { key: 'y', until: T0 + 5_000 }], T0);
      assert.equal((await store.topics.admitFlow({ topic: 'jobs', limits: CONCURRENCY, want: 5, holder: 'a', holdUntil: T0 + 1_000, now: T0 })).granted, 1, 'x and y hold two of the 3 slots');
      await store.topics.bindFlow({ topic: 'jobs', limits: CONCURRENCY, holder: 'a', unused: 1, leases: [], now: T0 });
      await store.topics.holdFlow('jobs', [{ key: 'x', until: T0 + 20_000 }], T0 + 100);
      assert.equal((await store.topics.admitFlow({ topic: 'jobs', limits: CONCURRENCY, want: 5, holder: 'b', holdUntil: T0 + 7_000, now: T0 + 6_000 })).granted, 2, 'y ran out at +5000; x moved to +20000');
      await store.topics.releaseFlow('jobs', ['x']);
      assert.equal((await store.topics.admitFlow({ topic: 'jobs', limits: CONCURRENCY, want: 5, holder: 'c', holdUntil: T0 + 7_000, now: T0 + 6_000 })).granted, 1);

      await store.tasks.schedule(
        ['r1', 'r2', 'r3', 'other', 'later'].map((id) => task(id, { runAt: T0, topic: id === 'other' ? 'mail' : 'jobs', ttrMs: id === 'r2' ? 9_000 : 5_000 })),
        T0 - 10,
      );
      const reserved = await store.tasks.reserve(['r1', 'r2', 'r3', 'other'], T0);
      assert.equal(reserved.length, 4);
      await store.tasks.ack('r3', reserved[2]!.receipt!, T0 + 1);
      const receiptOf = new Map(reserved.map((r) => [r.id, r.receipt!]));
      const leases = await store.topics.reservedLeases('jobs', T0 + 10, T0 + 60_000);
      assert.deepEqual(
        [...leases].sort((a, b) => a.until - b.until),
        [
          { key: receiptOf.get('r1'), until: T0 + 5_000 },
          { key: receiptOf.get('r2'), until: T0 + 9_000 },
        ],
        'reserved and in force, of that topic only, by receipt',
      );
      assert.deepEqual((await store.topics.reservedLeases('jobs', T0 + 5_000, T0 + 60_000)).map((l) => l.key), [receiptOf.get('r2')], 'r1 ran out at +5000');
      assert.deepEqual((await store.topics.reservedLeases('jobs', T0 + 10, T0 + 6_000)).map((l) => l.key), [receiptOf.get('r1')], 'ending by the bound given');
    });

    it('unused tokens go back, never past burst', async () => {
      const first = await store.topics.admitFlow({ topic: 'mail', limits: RATE, want: 5, holder: 'a', holdUntil: T0 + 10_000, now: T0 });
      assert.equal(first.granted, 5);
      await store.topics.bindFlow({ topic: 'mail', limits: RATE, holder: 'a', unused: 3, leases: [], now: T0 + 10 });
      assert.equal((await store.topics.admitFlow({ topic: 'mail', limits: RATE, want: 10, holder: 'b', holdUntil: T0 + 10_000, now: T0 + 10 })).granted, 3);
      await store.topics.bindFlow({ topic: 'mail', limits: RATE, holder: 'b', unused: 3, leases: [], now: T0 + 2_000 });
      // Refilled to 5 by +2000, then 3 given back: still 5.
      assert.equal((await store.topics.admitFlow({ topic: 'mail', limits: RATE, want: 10, holder: 'c', holdUntil: T0 + 10_000, now: T0 + 2_000 })).granted, 5);
    });

    it('a concurrency: slots are taken by admissions, become the deliveries, and are freed by release or when they run out', async () => {
      const a = await store.topics.admitFlow({ topic: 'jobs', limits: CONCURRENCY, want: 5, holder: 'a', holdUntil: T0 + 1_000, now: T0 });
      assert.deepEqual(a, { granted: 3, retryAt: 0 });
      assert.equal((await store.topics.admitFlow({ topic: 'jobs', limits: CONCURRENCY, want: 1, holder: 'b', holdUntil: T0 + 1_000, now: T0 })).granted, 0);
      // Two reserved: their slots are held until their reservations end; the third is given up.
      await store.topics.bindFlow({ topic: 'jobs', limits: CONCURRENCY, holder: 'a', unused: 1, leases: [{ key: 't1', until: T0 + 30_000 }, { key: 't2', until: T0 + 5_000 }], now: T0 + 5 });
      assert.equal((await store.topics.admitFlow({ topic: 'jobs', limits: CONCURRENCY, want: 5, holder: 'c', holdUntil: T0 + 1_000, now: T0 + 10 })).granted, 1);
      await store.topics.bindFlow({ topic: 'jobs', limits: CONCURRENCY, holder: 'c', unused: 1, leases: [], now: T0 + 10 });
      await store.topics.releaseFlow('jobs', ['t1', 'unknown']);
      assert.equal((await store.topics.admitFlow({ topic: 'jobs', limits: CONCURRENCY, want: 5, holder: 'd', holdUntil: T0 + 1_000, now: T0 + 20 })).granted, 2);
      await store.topics.bindFlow({ topic: 'jobs', limits: CONCURRENCY, holder: 'd', unused: 2, leases: [], now: T0 + 20 });
      // t2's reservation ran out at +5000: its slot counts no more.
      assert.equal((await store.topics.admitFlow({ topic: 'jobs', limits: CONCURRENCY, want: 5, holder: 'e', holdUntil: T0 + 10_000, now: T0 + 5_000 })).granted, 3);
    });

    it('an admission held past its time counts no more, and binding it later holds nothing', async () => {
      assert.equal((await store.topics.admitFlow({ topic: 'jobs', limits: CONCURRENCY, want: 3, holder: 'a', holdUntil: T0 + 1_000, now: T0 })).granted, 3);
      assert.equal((await store.topics.admitFlow({ topic: 'jobs', limits: CONCURRENCY, want: 3, holder: 'b', holdUntil: T0 + 5_000, now: T0 + 1_000 })).granted, 3);
      await store.topics.bindFlow({ topic: 'jobs', limits: CONCURRENCY, holder: 'a', unused: 0, leases: [{ key: 'late', until: T0 + 60_000 }], now: T0 + 1_500 });
      await store.topics.bindFlow({ topic: 'jobs', limits: CONCURRENCY, holder: 'b', unused: 3, leases: [], now: T0 + 1_500 });
      assert.equal((await store.topics.admitFlow({ topic: 'jobs', limits: CONCURRENCY, want: 5, holder: 'c', holdUntil: T0 + 5_000, now: T0 + 1_600 })).granted, 3);
    });

    it('rate and concurrency together: the tighter one decides, and tokens not granted for want of a slot stay', async () => {
      const model = new FlowLedger();
      const calls: [string, number, number][] = [
        ['a', 3, 0],
        ['b', 3, 1],
      ];
      for (const [holder, want, at] of calls) {
        const got = await store.topics.admitFlow({ topic: 'both', limits: BOTH, want, holder, holdUntil: T0 + 30_000, now: T0 + at });
        assert.deepEqual(got, model.admit({ topic: 'both', limits: BOTH, want, holder, holdUntil: T0 + 30_000, now: T0 + at }), holder);
      }
      await store.topics.releaseFlow('both', ['nothing']);
      await store.topics.bindFlow({ topic: 'both', limits: BOTH, holder: 'a', unused: 0, leases: [{ key: 'x', until: T0 + 30_000 }, { key: 'y', until: T0 + 30_000 }], now: T0 + 2 });
      model.bind({ topic: 'both', limits: BOTH, holder: 'a', unused: 0, leases: [{ key: 'x', until: T0 + 30_000 }, { key: 'y', until: T0 + 30_000 }], now: T0 + 2 });
      await store.topics.releaseFlow('both', ['x']);
      model.release('both', ['x']);
      const got = await store.topics.admitFlow({ topic: 'both', limits: BOTH, want: 3, holder: 'c', holdUntil: T0 + 30_000, now: T0 + 3 });
      assert.deepEqual(got, model.admit({ topic: 'both', limits: BOTH, want: 3, holder: 'c', holdUntil: T0 + 30_000, now: T0 + 3 }));
      assert.equal(got.granted, 1);
    });

    it('topics are limited apart', async () => {
      assert.equal((await store.topics.admitFlow({ topic: 'one', limits: RATE, want: 9, holder: 'a', holdUntil: T0 + 1_000, now: T0 })).granted, 5);
      assert.equal((await store.topics.admitFlow({ topic: 'two', limits: RATE, want: 9, holder: 'a', holdUntil: T0 + 1_000, now: T0 })).granted, 5);
    });
  });
}
