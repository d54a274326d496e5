/**
 * runRemoteTimerConformance: the contract of a RemoteTimerBackend (src/coordination/
 * remote-timers.ts) and of the RemoteTimers written once above it, run on every shared
 * store's backend: memory on a ManualClock (a channel and a polling-only variant:
 * test/coordination/remote-timer-conformance.test.ts), Redis and PostgreSQL (the stores'
 * own test files). Defines node:test suites.
 *
 * The RemoteTimers of each case read a ManualClock of the suite's: it decides their horizon
 * and drives their retries, whatever the backing. Messages and loads take the backing's own
 * time, waited for (at most WAIT_MS of real time). One backing serves every case, so a case
 * names its timers with a prefix of its own and judges only those, on a shard of its own.
 * A case that needs the timers channel runs only where the backing `delivers`; the case
 * of a backing that polls only (its timers reach owners through loads alone) runs on all.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../core/logger.js';
import { ManualClock } from '../core/manual-clock.js';
import type { RemoteTimerSource } from '../core/ports/index.js';
import type { TimerRef } from '../core/task/model.js';
import type { PendingTimer } from '../coordination/memory-timer-backend.js';
import { BadNotice, NoticeGuard, parseTimerNotice } from '../coordination/notices.js';
import { LOAD_RETRY_MS, RemoteTimers, type RemoteTimerBackend } from '../coordination/remote-timers.js';
import { shardOf } from '../coordination/router.js';
import { ShardLeases } from '../coordination/shard-leases.js';
import { timerLine } from '../coordination/timer-lines.js';
import { hostileMessage, seededRandom } from './hostile-messages.js';

export type { PendingTimer } from '../coordination/memory-timer-backend.js';

export interface TimerBackingUnderTest {
  /**
   * A view of the one store, as one process would open it (a connection of its own, where it
   * has them); `receive` is called with each message on its timers channel, its own too.
   */
  backend(receive: (message: string) => void): Promise<RemoteTimerBackend>;
  /** Whether a message published through one view reaches the views' `receive`: false for a polling-only backing. */
  readonly delivers: boolean;
  /**
   * Writes pending tasks with these run timers through the store's own write path, as a
   * producer did at `writtenAt` (long before their time: nothing is sent on the channel).
   */
  seed(timers: readonly PendingTimer[], writtenAt: number): Promise<void>;
  /** Sends `message` on the timers channel as it is, as any client of the store could; resolves once sent. */
  send(message: string): Promise<void>;
  close(): Promise<void>;
}

export type TimerBackingFactory = () => Promise<TimerBackingUnderTest>;

const T0 = Date.UTC(2030, 0, 1);
const DAY = 86_400_000;
const HORIZON_MS = 60_000;
/** Real time a message or a load may take on a busy host. */
const WAIT_MS = 10_000;

interface Heard {
  readonly ref: TimerRef;
  readonly source: RemoteTimerSource;
}

/** One process's RemoteTimers over its view, with what its listener and its channel heard. */
interface Process {
  readonly timers: RemoteTimers;
  readonly leases: ShardLeases;
  readonly guard: NoticeGuard;
  readonly heard: Heard[];
  readonly raw: string[];
  readonly backend: RemoteTimerBackend;
}

/** Lets the event loop turn until `done()`, at most WAIT_MS of real time. */
async function arrive(done: () => boolean, what: () => string): Promise<void> {
  const end = performance.now() + WAIT_MS;
  for (let turn = 0; !done(); turn++) {
    if (performance.now() > end) assert.fail(`${what()}: not within ${WAIT_MS} ms`);
    await new Promise<void>((resolve) => (turn < 50 ? setImmediate(resolve) : setTimeout(resolve, 2)));
  }
}

/** A view whose page reads go through `before(call)` first: it may throw (a failed read) or wait. */
function withPageReads(backend: RemoteTimerBackend, before: (call: number) => Promise<void>): RemoteTimerBackend & { readonly calls: () => number } {
  let calls = 0;
  return {
    shards: backend.shards,
    publish: (lines) => backend.publish(lines),
    loadDuePage: async (request) => {
      await before(++calls);
      return backend.loadDuePage(request);
    },
    ...(backend.prepareShard ? { prepareShard: backend.prepareShard.bind(backend) } : {}),
    calls: () => calls,
  };
}

const isAfter = (a: TimerRef, b: TimerRef): boolean => a.dueAt > b.dueAt || (a.dueAt === b.dueAt && a.seq > b.seq);
const runRef = (id: string, topic: string, dueAt: number, seq: number): TimerRef => ({ id, topic, kind: 'run', dueAt, seq, receipt: null });

export function runRemoteTimerConformance(name: string, open: TimerBackingFactory): void {
  describe(`remote timer conformance: ${name}`, () => {
    let backing: TimerBackingUnderTest;
    let shards = 0;
    let cases = 0;
    const started: RemoteTimers[] = [];
    before(async () => {
      backing = await open();
      shards = (await backing.backend(() => undefined)).shards;
    });
    after(async () => {
      for (const timers of started) timers.stop();
      await backing.close();
    });

    /** A case's own clock, id prefix and shard (cases run in turn: each is one backing's). */
    const scene = () => {
      const n = ++cases;
      const clock = new ManualClock(T0 + n * DAY);
      const prefix = `rt${n}-${process.pid}`;
      const home = (n * 5) % shards;
      let made = 0;
      /** `count` fresh ids of this case in `shard`. */
      const ids = (shard: number, count: number): string[] => {
        const out: string[] = [];
        while (out.length < count) {
          const id = `${prefix}-${made++}`;
          if (shardOf(id, shards) === shard) out.push(id);
        }
        return out;
      };
      const member = async (owned: readonly number[], wrap: (b: RemoteTimerBackend) => RemoteTimerBackend = (b) => b): Promise<Process> => {
        const raw: string[] = [];
        const heard: Heard[] = [];
        // The view is opened first (its channel is heard before any load), the RemoteTimers over it after.
        const to: { timers?: RemoteTimers } = {};
        const backend = wrap(
          await backing.backend((message) => {
            raw.push(message);
            to.timers?.receive(message);
          }),
        );
        const leases = new ShardLeases(`${prefix}-p${started.length}`, () => undefined);
        for (const shard of owned) leases.hold(shard, `token-${shard}`);
        const guard = new NoticeGuard(name, ['timers'], silentLogger, clock);
        const timers = (to.timers = new RemoteTimers({ backend, leases, clock, horizonMs: HORIZON_MS, guard }));
        timers.listen((ref, source) => void heard.push({ ref, source }));
        started.push(timers);
        return { timers, leases, guard, heard, raw, backend };
      };
      /** Ids heard by `p` from `source` that this case wrote (others' timers may share a shard). */
      const mine = (p: Process, source: RemoteTimerSource): string[] => p.heard.filter((h) => h.source === source && h.ref.id.startsWith(`${prefix}-`)).map((h) => h.ref.id);
      const seed = async (timers: readonly PendingTimer[]): Promise<void> => backing.seed(timers, clock.now() - DAY);
      return { clock, home, ids, member, mine, seed, prefix };
    };

    /** One loadShard's timers: each of `shard`, due before `until`, after the one before in (dueAt, seq) order. */
    const assertLoadOrder = (heard: readonly Heard[], shard: number, until: number): void => {
      heard.forEach(({ ref, source }, i) => {
        assert.equal(source, 'store');
        assert.equal(shardOf(ref.id, shards), shard, `${ref.id} is of shard ${shard}`);
        assert.ok(ref.dueAt < until, `${ref.id} due ${ref.dueAt}, before ${until}`);
        if (i > 0) assert.ok(isAfter(ref, heard[i - 1]!.ref), `${ref.id} (${ref.dueAt}, ${ref.seq}) after ${heard[i - 1]!.ref.id} (${heard[i - 1]!.ref.dueAt}, ${heard[i - 1]!.ref.seq})`);
      });
    };

    it('reads a page: only the shard asked, due before until, strictly after the cursor in (dueAt, seq) order, `limit` of them unless none are left', async () => {
      const { clock, home, ids, seed, prefix } = scene();
      const now = clock.now();
      // Five ties of five: pages of 4 end inside ties, so the cursor must break them by seq.
      const due = ids(home, 25).map((id, i) => ({ id, topic: 'orders', dueAt: now + 1_000 * Math.floor(i / 5) }));
      const later = ids(home, 3).map((id) => ({ id, topic: 'orders', dueAt: now + 5_000 }));
      const elsewhere = ids((home + 1) % shards, 4).map((id) => ({ id, topic: 'orders', dueAt: now }));
      await seed([...due, ...later, ...elsewhere]);
      const backend = await backing.backend(() => undefined);
      await backend.prepareShard?.(home, now + 5_000);
      const pages: TimerRef[][] = [];
      for (let cursor: TimerRef | undefined; ; ) {
        const page = await backend.loadDuePage({ shard: home, until: now + 5_000, after: cursor ? { dueAt: cursor.dueAt, seq: cursor.seq } : null, limit: 4 });
        pages.push([...page]);
        cursor = page.at(-1);
        if (page.length < 4) break;
        assert.ok(pages.length < 1_000, 'the pages end');
      }
      const all = pages.flat();
      assertLoadOrder(all.map((ref) => ({ ref, source: 'store' })), home, now + 5_000);
      assert.deepEqual(all.filter((ref) => ref.id.startsWith(`${prefix}-`)).map((ref) => ref.id), due.map((t) => t.id), 'every timer once, in the order written within a tie');
      for (const ref of all.filter((r) => r.id.startsWith(`${prefix}-`))) assert.deepEqual({ ...ref, seq: 0 }, runRef(ref.id, 'orders', ref.dueAt, 0));
      pages.slice(0, -1).forEach((page, i) => assert.equal(page.length, 4, `page ${i} is full: only the last may be short`));
    });

    it('takes a shard over: every timer due within the horizon once, over several pages, in (dueAt, seq) order; none beyond it', async () => {
      const { clock, home, ids, member, mine, seed } = scene();
      const now = clock.now();
      // 2,345 timers, 1,200 of them at one time: the first page (1,000) ends inside the tie.
      const due = ids(home, 2_345).map((id, i) => ({ id, topic: i % 2 === 0 ? 'orders' : 'mail', dueAt: i < 1_200 ? now + 10_000 : now + 10_000 + i }));
      const beyond = ids(home, 20).map((id, i) => ({ id, topic: 'orders', dueAt: now + HORIZON_MS + i * 1_000 }));
      await seed([...beyond, ...due]);
      const owner = await member([home]);
      await owner.timers.loadShard(home);
      assertLoadOrder(owner.heard, home, now + HORIZON_MS);
      const heard = mine(owner, 'store');
      assert.equal(new Set(heard).size, heard.length, 'none twice');
      assert.deepEqual([...heard].sort(), due.map((t) => t.id).sort(), 'each timer due within the horizon, none beyond it');
      const topics = new Map(due.map((t) => [t.id, t.topic]));
      for (const { ref } of owner.heard) if (topics.has(ref.id)) assert.equal(ref.topic, topics.get(ref.id));
    });

    it('retries a failed load on the clock, every LOAD_RETRY_MS, from where it stopped (nothing twice), and stops retrying once the shard is lost', async () => {
      const { clock, home, ids, member, mine, seed } = scene();
      const due = ids(home, 1_500).map((id, i) => ({ id, topic: 'orders', dueAt: clock.now() + 1_000 + i }));
      await seed(due);
      let view: ReturnType<typeof withPageReads> | undefined;
      // The first read fails, the second (the first page) works, the third (the second page) fails.
      const owner = await member([home], (b) => (view = withPageReads(b, async (call) => (call === 1 || call === 3 ? Promise.reject(new Error(`read ${call} failed`)) : undefined))));
      const load = owner.timers.loadShard(home);
      await arrive(() => clock.pendingTimers === 1, () => 'a retry armed after the first read failed');
      assert.equal(view!.calls(), 1);
      clock.advance(LOAD_RETRY_MS - 1);
      assert.equal(clock.pendingTimers, 1, 'not retried before LOAD_RETRY_MS');
      clock.advance(1);
      await arrive(() => view!.calls() === 3 && clock.pendingTimers === 1, () => `the first page read, the second failed (${view!.calls()} reads)`);
      assert.equal(owner.heard.length, 1_000, 'the first page handed on');
      clock.advance(LOAD_RETRY_MS);
      await load;
      const heard = mine(owner, 'store');
      assert.equal(new Set(heard).size, heard.length, 'the retry went on from the cursor: nothing handed on twice');
      assert.deepEqual([...heard].sort(), due.map((t) => t.id).sort());
      assertLoadOrder(owner.heard, home, clock.now() + HORIZON_MS);
      assert.equal(clock.pendingTimers, 0);

      // A shard lost while its load waits to be retried: the retry reads nothing.
      const failing = withPageReads(await backing.backend(() => undefined), () => Promise.reject(new Error('down')));
      const loser = await member([home], () => failing);
      const lost = loser.timers.loadShard(home);
      await arrive(() => clock.pendingTimers === 1, () => 'a retry armed');
      loser.leases.markLost(home);
      clock.advance(LOAD_RETRY_MS);
      await lost;
      assert.equal(failing.calls(), 1, 'no read after the shard was lost');
      assert.equal(clock.pendingTimers, 0);
    });

    it('stop() cancels the retries waiting, and a load in flight when it is called neither hands on its page nor arms a retry', async () => {
      const { clock, home, ids, member, seed } = scene();
      await seed(ids(home, 1_100).map((id, i) => ({ id, topic: 'orders', dueAt: clock.now() + i })));
      const failing = withPageReads(await backing.backend(() => undefined), () => Promise.reject(new Error('down')));
      const waiting = await member([home], () => failing);
      const load = waiting.timers.loadShard(home);
      await arrive(() => clock.pendingTimers === 1, () => 'a retry armed');
      waiting.timers.stop();
      assert.equal(clock.pendingTimers, 0, 'the retry is cancelled');
      await load;
      clock.advance(LOAD_RETRY_MS * 5);
      assert.equal(failing.calls(), 1);

      for (const outcome of ['fails', 'answers'] as const) {
        let release: () => void = () => undefined;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const view = withPageReads(await backing.backend(() => undefined), async () => {
          await gate;
          if (outcome === 'fails') throw new Error('the store is closing');
        });
        const closing = await member([home], () => view);
        let settled = false;
        void closing.timers.loadShard(home).then(() => (settled = true));
        await arrive(() => view.calls() === 1, () => 'a read in flight');
        closing.timers.stop();
        release();
        await arrive(() => settled || clock.pendingTimers > 0, () => `the load ends after its read ${outcome}`);
        assert.equal(clock.pendingTimers, 0, `no retry armed after stop() when the read ${outcome}`);
        assert.deepEqual(closing.heard, [], `nothing handed on after stop() when the read ${outcome}`);
        assert.equal(view.calls(), 1, 'no further page read');
      }

      // A timers message that arrives after stop() (the subscriber closes after the timers) is not handed on either.
      const [lateId] = ids(home, 1);
      waiting.timers.receive(timerLine(runRef(lateId!, 'orders', clock.now() + 1, 1)));
      assert.deepEqual(waiting.heard, [], 'nothing handed on from a message received after stop()');
    });

    it('a backend that only polls (its messages reach no one) still brings every timer to its owner, through takeover loads and the next loads', async () => {
      const { clock, ids, member, mine, seed } = scene();
      const now = clock.now();
      // Four timers per shard, due over two horizons, written and published by a producer that owns nothing.
      const timers = Array.from({ length: shards }, (_, shard) => ids(shard, 4).map((id, i) => ({ id, topic: 'orders', dueAt: now + (i * HORIZON_MS) / 2 + shard }))).flat();
      await seed(timers);
      const producer = await member([]);
      producer.timers.publish(timers.map((t, i) => runRef(t.id, t.topic, t.dueAt, i + 1)), now);
      const half = Array.from({ length: shards }, (_, s) => s);
      const first = await member(half.filter((s) => s % 2 === 0));
      const second = await member(half.filter((s) => s % 2 === 1));
      for (const p of [first, second]) for (const shard of p.leases.owned()) await p.timers.loadShard(shard);
      const within = timers.filter((t) => t.dueAt < now + HORIZON_MS).map((t) => t.id);
      assert.deepEqual([...mine(first, 'store'), ...mine(second, 'store')].sort(), [...within].sort(), 'each timer within the horizon, by its owner');
      // The first owner dies; the second takes its shards and loads them, and a horizon later loads all again.
      first.timers.stop();
      for (const shard of first.leases.owned()) {
        second.leases.hold(shard, 'taken');
        await second.timers.loadShard(shard);
      }
      clock.advance(HORIZON_MS);
      for (const shard of second.leases.owned()) await second.timers.loadShard(shard);
      assert.deepEqual([...new Set(mine(second, 'store'))].sort(), timers.map((t) => t.id).sort(), 'every timer, through loads alone');
      if (!backing.delivers) for (const p of [producer, first, second]) assert.deepEqual(p.raw, [], 'a polling-only backing delivers nothing');
    });

    it('drops and counts a hostile timers message, never throws, and hears the good ones beside it (seeded fuzz)', async () => {
      const { clock, home, ids, member, seed } = scene();
      const owned = Array.from({ length: shards }, (_, s) => s).filter((s) => s % 2 === 0);
      const tasks = owned.flatMap((shard) => ids(shard, 2)).map((id) => ({ id, topic: 'orders', runAt: clock.now() + 5_000 }));
      await seed(tasks.map((t) => ({ id: t.id, topic: t.topic, dueAt: t.runAt })));
      const owner = await member(owned);
      const random = seededRandom(50);
      const neighbour = ids(home, 300);
      const expected: TimerRef[] = [];
      let bad = 0;
      for (let i = 0; i < 300; i++) {
        const message = hostileMessage(random, 'timers', tasks, clock.now());
        const parsed = parseTimerNotice(message);
        if (parsed instanceof BadNotice) bad++;
        else expected.push(...parsed.filter((ref) => ref.dueAt < clock.now() + HORIZON_MS && owned.includes(shardOf(ref.id, shards))));
        owner.timers.receive(message);
        const good = runRef(neighbour[i]!, i % 2 === 0 ? 'orders' : '~push:orders', clock.now() + i, i);
        expected.push(good);
        owner.timers.receive(timerLine(good));
        clock.advance(7);
      }
      assert.ok(bad > 50 && bad < 300, `the fuzz sends both kinds: ${bad} bad of 300`);
      assert.equal(owner.guard.counts().get('timers'), bad, 'each bad message counted once');
      assert.deepEqual(owner.heard, expected.map((ref) => ({ ref, source: 'notice' })), 'the good messages, each timer of an owned shard within the horizon, as sent');
    });

    describe('over the timers channel', () => {
      it('a timer published for a shard another process owns reaches that owner once, its fields intact; the others hear nothing of it; none is sent for a shard the publisher owns', async (t) => {
        if (!backing.delivers) return t.skip('the backing delivers no messages (polling only)');
        const { clock, home, ids, member } = scene();
        const [a, b, c] = [home, (home + 1) % shards, (home + 2) % shards];
        const publisher = await member([a]);
        const owner = await member([b]);
        const other = await member([c]);
        const now = clock.now();
        const [ownId] = ids(a, 1);
        const [pushId, lateId] = ids(b, 2);
        const [otherId] = ids(c, 1);
        const push = runRef(pushId!, '~push:orders', now + 1_000, 7);
        const late = runRef(lateId!, 'orders', now - 500, 123_456_789);
        const elsewhere = runRef(otherId!, 'mail', now + 2, 9);
        publisher.timers.publish([push, null, runRef(ownId!, 'orders', now, 1), late, elsewhere], now);
        await arrive(() => owner.heard.length >= 2 && other.heard.length >= 1, () => 'the owners hear their timers');
        // A second message, so that a copy of the first would have arrived before it.
        const [nextId] = ids(b, 1);
        publisher.timers.publish([runRef(nextId!, 'orders', now, 10)], now);
        await arrive(() => owner.heard.length >= 3, () => 'the second message');
        assert.deepEqual(owner.heard, [push, late, runRef(nextId!, 'orders', now, 10)].map((ref) => ({ ref, source: 'notice' })));
        assert.deepEqual(other.heard, [{ ref: elsewhere, source: 'notice' }]);
        assert.deepEqual(publisher.heard, [], 'the publisher owns neither shard');
        for (const p of [publisher, owner, other]) assert.ok(!p.raw.some((m) => m.includes(ownId!)), 'nothing sent for the shard the publisher owns');
      });

      it('a timer due at or beyond the horizon is neither sent nor kept', async (t) => {
        if (!backing.delivers) return t.skip('the backing delivers no messages (polling only)');
        const { clock, home, ids, member } = scene();
        const publisher = await member([]);
        const owner = await member([home]);
        const now = clock.now();
        const [nearId, atId, beyondId, near2Id] = ids(home, 4);
        const near = runRef(nearId!, 'orders', now + HORIZON_MS - 1, 1);
        publisher.timers.publish([runRef(atId!, 'orders', now + HORIZON_MS, 2), near, runRef(beyondId!, 'orders', now + HORIZON_MS + 60_000, 3)], now);
        await arrive(() => owner.heard.length >= 1, () => 'the timer within the horizon');
        assert.ok(!owner.raw.some((m) => m.includes(atId!) || m.includes(beyondId!)), 'not sent');
        // Sent anyway, by another client: not kept, judged by the receiver's own clock.
        clock.advance(1_000);
        const near2 = runRef(near2Id!, 'orders', clock.now() + HORIZON_MS - 1, 4);
        await backing.send([runRef(atId!, 'orders', clock.now() + HORIZON_MS, 2), near2, runRef(beyondId!, 'orders', now + 10 * HORIZON_MS, 3)].map(timerLine).join('\n'));
        await arrive(() => owner.heard.length >= 2, () => 'the second message');
        assert.deepEqual(owner.heard, [near, near2].map((ref) => ({ ref, source: 'notice' })), 'only those within the horizon');
      });

      it('a hostile message on the channel is dropped and counted by each process, and the messages around it still arrive', async (t) => {
        if (!backing.delivers) return t.skip('the backing delivers no messages (polling only)');
        const { clock, home, ids, member } = scene();
        const owner = await member([home]);
        const bystander = await member([]);
        const now = clock.now();
        const good = ids(home, 9).map((id, i) => runRef(id, 'orders', now + i, i + 1));
        const hostile = [
          `${good[0]!.id} orders -Infinity 1`,
          `${good[0]!.id} orders abc 1`,
          `${good[0]!.id} orders 1e400 1`,
          `${good[0]!.id} orders ${now} 1 extra`,
          `${good[0]!.id} ~push: ${now} 1`,
          `${timerLine(good[0]!)}\n${good[0]!.id} orders ${now} -1`,
          '',
          'x'.repeat(2_000),
        ];
        await backing.send(timerLine(good[0]!));
        for (const [i, message] of hostile.entries()) {
          await backing.send(message);
          await backing.send(timerLine(good[i + 1]!));
        }
        await arrive(() => owner.heard.length >= good.length, () => `the good messages (${owner.heard.length} of ${good.length})`);
        await arrive(() => bystander.guard.counts().get('timers') === hostile.length, () => 'the bystander counts them too');
        assert.deepEqual(owner.heard, good.map((ref) => ({ ref, source: 'notice' })), 'every good message, none of a bad one (a bad line drops its whole message)');
        assert.equal(owner.guard.counts().get('timers'), hostile.length);
        assert.deepEqual(bystander.heard, []);
      });
    });
  });
}
