/**
 * `waitReplicas`: every write resolves only once that many replicas acknowledged it (WAIT),
 * or rejects with STORE_UNAVAILABLE. A real master and replica (and a cluster with one
 * replica per master); a replica stopped with SIGSTOP makes writes fail within the timeout
 * instead of resolving, and a SIGCONT makes them work again.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { isDelayQError } from '../../../src/core/errors.js';
import { DelayQueue } from '../../../src/open-queue.js';
import { openStore } from '../../../src/stores/open-store.js';
import { scheduleRecord } from '../../../src/testing/store-conformance/index.js';
import { cli, redisSkip, startCluster, startRedis, type RedisCluster, type RedisServer } from '../../helpers/redis-servers.js';

const skip = redisSkip();

describe('redis store: waitReplicas', { skip }, () => {
  let master: RedisServer | undefined;
  let replica: RedisServer | undefined;

  before(async () => {
    master = await startRedis();
    replica = await startRedis({ replicaOf: master.port });
  });

  after(async () => {
    replica?.resume();
    for (const server of [replica, master]) {
      await server?.stop();
      server?.remove();
    }
  });

  it('resolves a write once the replica has it (URL query), and rejects with STORE_UNAVAILABLE while the replica is stopped', { timeout: 30_000 }, async () => {
    const queue = await DelayQueue.open({ store: `${master!.url}?prefix=wr1&shards=2&waitReplicas=1&waitTimeoutMs=2000` });
    try {
      await queue.schedule({ id: 'a', topic: 't', payload: { n: 1 }, delayMs: 60_000 });
      // Resolved, so the replica has it: read it there.
      const pools = cli(replica!.port, '--scan', '--pattern', 'wr1:*:pool').split('\n').filter((k) => k.length > 0);
      assert.equal(pools.length > 0, true);
      assert.match(pools.map((pool) => cli(replica!.port, 'HKEYS', pool)).join(''), /^a$/m);

      replica!.pause();
      const started = Date.now();
      await assert.rejects(
        queue.schedule({ id: 'b', topic: 't', delayMs: 60_000 }),
        (e: unknown) => isDelayQError(e, 'STORE_UNAVAILABLE') && /0 of the 1 replicas/.test((e as Error).message),
      );
      assert.ok(Date.now() - started >= 1_900, 'it waited for the replica');
      await assert.rejects(queue.cancel('a'), (e: unknown) => isDelayQError(e, 'STORE_UNAVAILABLE'));
      // Reads need no replica. The refused cancel was applied on the master all the same: a
      // rejection says "not known to be on a replica", not "not done".
      assert.equal((await queue.get('a'))?.state, 'cancelled');

      // While the shard is known not to take writes, its writes are refused at once, without
      // waiting out the timeout again, and stats say so.
      // (The schedule of b and the cancel of a: both shards of the namespace.)
      const shards = (await queue.stats()).unavailable;
      assert.deepEqual(shards.map((s) => s.partition), [0, 1]);
      for (const shard of shards) assert.match(shard.error, /0 of the 1 replicas/);
      const fast = Date.now();
      await assert.rejects(queue.schedule({ id: 'c', topic: 't', delayMs: 60_000 }), (e: unknown) => isDelayQError(e, 'STORE_UNAVAILABLE'));
      // Well under the 2 s timeout: the call still reads the seq counter first, on the connection
      // a write issued before the mark may hold with its WAIT (a loaded CI host took over 250 ms).
      assert.ok(Date.now() - fast < 1_500, `refused without waiting out the timeout (took ${Date.now() - fast} ms)`);

      replica!.resume();
      // Its probe (every second) finds the shard back.
      const deadline = Date.now() + 10_000;
      while ((await queue.stats()).unavailable.length > 0) {
        assert.ok(Date.now() < deadline, 'the shard takes writes again within 10 s of its replica resuming');
        await sleep(100);
      }
      // The rejected write did reach the master: sent again, it answers as a repeat does.
      const again = await queue.schedule({ id: 'b', topic: 't', delayMs: 60_000 });
      assert.equal(again.id, 'b');
      assert.equal(await queue.cancel('a'), false, 'the cancel sent again finds it done');
    } finally {
      replica!.resume();
      await queue.close();
    }
  });

  it('writes issued while one waits for a stopped replica are refused with it, at once and without being sent', { timeout: 30_000 }, async () => {
    const queue = await DelayQueue.open({ store: `${master!.url}?prefix=wr4&shards=2&waitReplicas=1&waitTimeoutMs=1000` });
    const later = Array.from({ length: 10 }, (_, i) => `later-${i}`);
    try {
      await queue.schedule({ id: 'warm', topic: 't', delayMs: 60_000 });
      replica!.pause();
      const started = Date.now();
      const first = queue.schedule({ id: 'first', topic: 't', delayMs: 60_000 });
      await sleep(100);
      const outcomes = await Promise.allSettled([first, ...later.map((id) => queue.schedule({ id, topic: 't', delayMs: 60_000 }))]);
      const took = Date.now() - started;
      for (const o of outcomes) assert.ok(o.status === 'rejected' && isDelayQError(o.reason, 'STORE_UNAVAILABLE'), String(o.status === 'rejected' ? o.reason : 'resolved'));
      // One WAIT per write held the connection for 11 timeouts here.
      assert.ok(took < 2 * 1_000, `refused within 2 timeouts, not one each (took ${took} ms)`);
      replica!.resume();
      const deadline = Date.now() + 10_000;
      while ((await queue.stats()).unavailable.length > 0) {
        assert.ok(Date.now() < deadline, 'the shards take writes again');
        await sleep(100);
      }
      for (const id of later) assert.equal(await queue.get(id), null, `${id} never reached the master`);
    } finally {
      replica!.resume();
      await queue.close();
    }
  });

  it('reserves and acks under waitReplicas, storeOptions form', { timeout: 30_000 }, async () => {
    const queue = await DelayQueue.open({ store: master!.url, storeOptions: { prefix: 'wr2', shards: 2, waitReplicas: 1, waitTimeoutMs: 1_000 } });
    try {
      await queue.scheduleMany(Array.from({ length: 20 }, (_, i) => ({ id: `t${i}`, topic: 't', payload: i })));
      const got: string[] = [];
      const deadline = Date.now() + 10_000;
      while (got.length < 20 && Date.now() < deadline) {
        const batch = await queue.reserve('t', { max: 20, waitMs: 500 });
        for (const d of batch) got.push(d.id);
        assert.deepEqual(await queue.ackMany(batch), batch.map(() => 'acked'));
      }
      assert.equal(got.length, 20);
      assert.equal((await queue.stats()).counts.completed, 20);
    } finally {
      await queue.close();
    }
  });

  it('asks for more replicas than there are: every write rejects; bad settings are refused', { timeout: 30_000 }, async () => {
    const store = await openStore(`${master!.url}?prefix=wr3&shards=1&waitReplicas=2&waitTimeoutMs=100`);
    try {
      const at = Date.now();
      await assert.rejects(
        store.tasks.schedule([{ id: 'x', topic: 't', payload: 'null', runAt: at + 60_000, maxAttempts: 3, ttrMs: 1_000, backoff: { baseMs: 1, factor: 1, maxMs: 1, jitter: 0 } }], at),
        (e: unknown) => isDelayQError(e, 'STORE_UNAVAILABLE') && /1 of the 2 replicas/.test((e as Error).message),
      );
      // Schedule writes wait too: an acknowledged upsert survives a failover like a task.
      const unreplicated = (e: unknown): boolean => isDelayQError(e, 'STORE_UNAVAILABLE') && /1 of the 2 replicas/.test((e as Error).message);
      const s = scheduleRecord('s');
      await assert.rejects(store.schedules.putSchedule(s), unreplicated);
      await assert.rejects(store.schedules.putNewSchedules([scheduleRecord('n')]), unreplicated);
      await assert.rejects(store.schedules.swapSchedule(s, { ...s, count: 1 }), unreplicated);
      await assert.rejects(store.schedules.deleteSchedule('s'), unreplicated);
    } finally {
      await store.close();
    }
    await assert.rejects(openStore(`${master!.url}?waitReplicas=x`), (e: unknown) => isDelayQError(e, 'INVALID_STORE_URL'));
    await assert.rejects(openStore(`${master!.url}?waitTimeoutMs=0&waitReplicas=1`), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
    await assert.rejects(openStore(`${master!.url}?waitReplicas=1`, { waitReplicas: 2 }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
    await assert.rejects(openStore(master!.url, { waitReplicas: 17 }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
  });
});

describe('redis cluster store: waitReplicas waits on the master that took the write', { skip }, () => {
  let cluster: RedisCluster | undefined;

  before(async () => {
    cluster = await startCluster(3, 1);
  });

  after(async () => {
    for (const server of cluster?.servers ?? []) server.resume();
    await cluster?.stop();
  });

  it('writes through every master; with one master\'s replica stopped, the writes to that master reject and the others resolve', { timeout: 60_000 }, async () => {
    const queue = await DelayQueue.open({ store: `${cluster!.url}?prefix=wrc&shards=6&waitReplicas=1&waitTimeoutMs=2000` });
    try {
      const ids = Array.from({ length: 30 }, (_, i) => `c${i}`);
      for (const id of ids) await queue.schedule({ id, topic: 't', delayMs: 60_000 });

      // The replica of the first master.
      const masterId = cli(cluster!.servers[0]!.port, 'CLUSTER', 'MYID').trim();
      const replica = cluster!.servers.find((s) => cli(s.port, 'INFO', 'replication').includes(`master_port:${cluster!.servers[0]!.port}`));
      assert.ok(replica, `a replica of ${masterId}`);
      replica.pause();
      const started = Date.now();
      const outcomes = await Promise.allSettled(ids.map((id) => queue.schedule({ id: `${id}-2`, topic: 't', delayMs: 60_000 })));
      const took = Date.now() - started;
      replica.resume();
      // WAIT blocks its connection: one per write made the last of k writes to that master
      // answer after k timeouts (24 s here). Each of its 2 shards sends one WAIT for all of
      // its writes issued together.
      assert.ok(took < 3 * 2_000, `the writes to the stalled master answered within 3 timeouts, not one each (took ${took} ms)`);
      const rejected = outcomes.filter((o) => o.status === 'rejected');
      assert.ok(rejected.length > 0, 'the writes to the master whose replica stopped were refused');
      assert.ok(rejected.length < ids.length, 'the writes to the other masters went through');
      for (const o of rejected) assert.ok(isDelayQError(o.reason, 'STORE_UNAVAILABLE'), String(o.reason));
    } finally {
      await queue.close();
    }
  });
});
