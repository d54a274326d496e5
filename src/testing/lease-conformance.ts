/**
 * runLeaseConformance: the contract of a LeaseBackend (src/coordination/lease-keeper.ts),
 * what a backing of shard leases must do for the lease loop written once above it (fair
 * shares by join order, renewal, takeover, fencing), run on every backing: memory on a
 * ManualClock, Redis, PostgreSQL (test/coordination/lease-conformance.test.ts and the stores'
 * own test files). Defines node:test suites.
 *
 * Time is the backing's to move (`pass`): a ManualClock moved by hand, or the system clock
 * and a real wait where the backing runs leases out by itself (Redis: PX).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Clock } from '../core/ports/index.js';
import { SharedLeaseKeeper, type LeaseBackend, type LeaseEvents } from '../coordination/lease-keeper.js';
import { ShardLeases } from '../coordination/shard-leases.js';

export interface LeaseBackingUnderTest {
  /** A view of the one backing, as one process would open it (a connection of its own, where it has them). */
  backend(): Promise<LeaseBackend>;
  /** The clock the suite and its keepers read. */
  readonly clock: Clock;
  /** Lets `ms` go by on that clock, and what it set off settle. */
  pass(ms: number): Promise<void>;
  /** The keepers' lease length: short enough for the suite to wait out several (each tick is a fifth). */
  readonly leaseMs: number;
  close(): Promise<void>;
}

export type LeaseBackingFactory = () => Promise<LeaseBackingUnderTest>;

const quiet: LeaseEvents = { acquired: () => undefined, afterTick: async () => undefined, error: () => undefined, healthy: () => undefined };

/** A backend whose calls fail once `dead` is set: a process that stopped answering. */
function killable(backend: LeaseBackend): { backend: LeaseBackend; kill(): void } {
  let dead = false;
  const alive = <A extends unknown[], R>(call: (...args: A) => Promise<R>) => (...args: A): Promise<R> => (dead ? Promise.reject(new Error('this process is dead')) : call(...args));
  return {
    backend: {
      shardCount: backend.shardCount,
      heartbeat: alive(backend.heartbeat.bind(backend)),
      acquire: alive(backend.acquire.bind(backend)),
      renew: alive(backend.renew.bind(backend)),
      release: alive(backend.release.bind(backend)),
      leave: alive(backend.leave.bind(backend)),
    },
    kill: () => void (dead = true),
  };
}

export function runLeaseConformance(name: string, open: LeaseBackingFactory): void {
  describe(`lease backend conformance: ${name}`, () => {
    let backing: LeaseBackingUnderTest;
    const keepers: SharedLeaseKeeper[] = [];
    let owners = 0;
    /** Owner ids unique to this run, in the order asked (a backing may outlive one run). */
    const owner = (tag: string): string => `${tag}-${process.pid}-${++owners}`;
    before(async () => {
      backing = await open();
    });
    after(async () => {
      for (const keeper of keepers) await keeper.stop().catch(() => undefined);
      await backing.close();
    });

    const keeper = async (backend: LeaseBackend, id: string): Promise<SharedLeaseKeeper> => {
      const k = new SharedLeaseKeeper(backend, new ShardLeases(id, () => undefined), backing.leaseMs, backing.clock, quiet);
      keepers.push(k);
      await k.start();
      return k;
    };
    /** Lets ticks go by until `done()`, at most `ms` of the clock. */
    const until = async (done: () => boolean, ms: number, what: () => string): Promise<void> => {
      const step = Math.max(10, Math.floor(backing.leaseMs / 10));
      for (let waited = 0; !done() && waited <= ms; waited += step) await backing.pass(step);
      assert.ok(done(), `${what()}: not within ${ms} ms`);
    };

    it('takes a free shard once: a second owner gets nothing while it is held', async () => {
      const b = await backing.backend();
      const now = backing.clock.now();
      const token = await b.acquire(0, owner('a'), now, 60_000);
      assert.equal(typeof token, 'string');
      assert.equal(await b.acquire(0, owner('b'), now, 60_000), null);
      await b.release(0, token!);
    });

    it('renews with its token only; a release with another token does nothing; after a release the next holder gets a new token and the old one is fenced off', async () => {
      const b = await backing.backend();
      const other = await backing.backend();
      const now = backing.clock.now();
      const token = (await b.acquire(1, owner('a'), now, 60_000))!;
      assert.equal(await b.renew(1, token, now, 60_000), true);
      assert.equal(await other.renew(1, `${token}0`, now, 60_000), false, 'another token');
      await other.release(1, `${token}0`);
      assert.equal(await other.acquire(1, owner('b'), now, 60_000), null, 'still held after a release with another token');
      await b.release(1, token);
      const next = await other.acquire(1, owner('b'), now, 60_000);
      assert.ok(next !== null && next !== token, `a new token: ${next} after ${token}`);
      assert.equal(await b.renew(1, token, now, 60_000), false, 'the old token renews nothing');
      await other.release(1, next);
    });

    it('runs a lease out when it is not renewed: another owner takes it with a new token, and the old one no longer renews', async () => {
      const b = await backing.backend();
      const other = await backing.backend();
      const ttl = backing.leaseMs / 2;
      const token = (await b.acquire(2, owner('a'), backing.clock.now(), ttl))!;
      assert.equal(await other.acquire(2, owner('b'), backing.clock.now(), ttl), null);
      await backing.pass(ttl + backing.leaseMs / 5);
      const now = backing.clock.now();
      const next = await other.acquire(2, owner('b'), now, 60_000);
      assert.ok(next !== null && next !== token, `taken after it ran out: ${next}`);
      assert.equal(await b.renew(2, token, now, 60_000), false);
      await other.release(2, next);
    });

    it('counts the live processes and ranks them by when they joined, not by id; forgets one that left or whose heartbeat ran out', async () => {
      const b = await backing.backend();
      const long = 600_000;
      // Ids whose order as bytes is the reverse of joining: the rank must follow joining.
      const first = owner('zz');
      const second = owner('aa');
      const m = owner('mm');
      let now = backing.clock.now();
      assert.deepEqual(await b.heartbeat(first, now, now + long), { live: 1, rank: 0 });
      await backing.pass(10);
      now = backing.clock.now();
      assert.deepEqual(await b.heartbeat(second, now, now + long), { live: 2, rank: 1 }, 'the newcomer ranks after the first, whose id sorts after its own');
      assert.deepEqual(await b.heartbeat(first, now, now + long), { live: 2, rank: 0 }, 'the first keeps its join time');
      // A heartbeat that runs out.
      assert.deepEqual(await b.heartbeat(m, now, now + backing.leaseMs / 5), { live: 3, rank: 2 });
      await backing.pass(backing.leaseMs / 5 + 50);
      now = backing.clock.now();
      assert.deepEqual(await b.heartbeat(first, now, now + long), { live: 2, rank: 0 }, 'the run-out heartbeat is not counted');
      await b.leave(second);
      assert.deepEqual(await b.heartbeat(first, now, now + long), { live: 1, rank: 0 }, 'one that left is not counted');
      await b.leave(first);
    });

    it('three keepers share the shards: floor or floor + 1 each, each shard held once, the extra ones by the first to join', async () => {
      const started: SharedLeaseKeeper[] = [];
      // Owner ids whose order is the reverse of joining: the shares follow joining.
      // Each joins a little after the one before (at the same time, the order would be by id).
      for (const tag of ['k3', 'k2', 'k1']) {
        started.push(await keeper(await backing.backend(), owner(tag)));
        await backing.pass(20);
      }
      const shardCount = (await backing.backend()).shardCount;
      const low = Math.floor(shardCount / 3);
      const extra = shardCount % 3;
      const expected = [0, 1, 2].map((rank) => low + (rank < extra ? 1 : 0));
      const sizes = (): number[] => started.map((k) => k.leases.owned().length);
      await until(() => sizes().join() === expected.join(), backing.leaseMs * 4, () => `shares ${expected.join()} in the order they joined, have ${sizes().join()}`);
      const held = started.flatMap((k) => k.leases.owned()).sort((x, y) => x - y);
      assert.deepEqual(held, Array.from({ length: shardCount }, (_, i) => i), 'every shard held once');
      // Stable: a few more ticks change nothing, and each keeps its tokens.
      const tokens = started.map((k) => k.leases.entries().sort(([x], [y]) => x - y).join());
      await backing.pass(backing.leaseMs);
      assert.deepEqual(sizes(), expected);
      assert.deepEqual(started.map((k) => k.leases.entries().sort(([x], [y]) => x - y).join()), tokens, 'no shard changed hands');
      for (const k of started) await k.stop();
    });

    it("takes over a dead keeper's shards once its leases run out, within leaseMs of its last tick", async () => {
      const deadOne = killable(await backing.backend());
      const dead = await keeper(deadOne.backend, owner('dead'));
      const survivor = await keeper(await backing.backend(), owner('survivor'));
      const shardCount = deadOne.backend.shardCount;
      await until(() => dead.leases.owned().length + survivor.leases.owned().length === shardCount && survivor.leases.owned().length > 0, backing.leaseMs * 4, () => 'both hold shards');
      const lost = dead.leases.owned();
      deadOne.kill();
      await until(() => survivor.leases.owned().length === shardCount, backing.leaseMs * 2, () => `the survivor holds all ${shardCount}, has ${survivor.leases.owned().length}`);
      for (const shard of lost) assert.ok(survivor.leases.owns(shard));
      await survivor.stop();
      await dead.stop();
    });
  });
}
