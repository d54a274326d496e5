/**
 * A connection lost in the middle of a schedule call: Redis ran the script, its reply never
 * arrived. ioredis sends the call again on the new connection (or the caller retries), and
 * the script, idempotent by id, creates nothing the second time. The task must still fire:
 * its timer has to reach a wheel although the answer that reached the caller says "already
 * there". A TCP proxy between the store and a real redis-server cuts the connection right
 * after forwarding the call, before its reply.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createServer, connect as connectTcp, type Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DelayQueue } from '../../../src/open-queue.js';
import { scripts } from '../../../src/stores/redis/scripts.js';
import { redisSkip, startRedis, type RedisServer } from '../../helpers/redis-servers.js';

const skip = redisSkip();

/** Forwards every connection to Redis; `cutAfter(marker)` drops the reply to the next request holding `marker`. */
class CuttingProxy {
  private readonly server: Server;
  private marker: Buffer | null = null;
  cuts = 0;

  constructor(redisPort: number) {
    this.server = createServer((client) => {
      const upstream = connectTcp(redisPort, '127.0.0.1');
      let cutting = false;
      const closeBoth = (): void => {
        client.destroy();
        upstream.destroy();
      };
      client.on('data', (chunk: Buffer) => {
        if (this.marker !== null && chunk.includes(this.marker)) {
          this.marker = null;
          cutting = true;
        }
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (cutting) {
          // The call ran in Redis; its reply is dropped and the connection goes down.
          this.cuts++;
          closeBoth();
          return;
        }
        client.write(chunk);
      });
      client.on('error', closeBoth).on('close', closeBoth);
      upstream.on('error', closeBoth).on('close', closeBoth);
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    return address.port;
  }

  cutAfter(marker: string): void {
    this.marker = Buffer.from(marker);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('redis store: calls whose reply is lost', { skip }, () => {
  let server: RedisServer | undefined;
  let proxy: CuttingProxy | undefined;
  let port = 0;

  before(async () => {
    server = await startRedis();
    proxy = new CuttingProxy(server.port);
    port = await proxy.listen();
  });

  after(async () => {
    await proxy?.close();
    await server?.stop();
    server?.remove();
  });

  it('creates the task once and still fires it, after the call is sent again', { timeout: 30_000 }, async () => {
    const queue = await DelayQueue.open({ store: `redis://127.0.0.1:${port}`, storeOptions: { prefix: 'lost', shards: 4 } });
    try {
      const delivered: string[] = [];
      queue.work('orders', (delivery) => void delivered.push(delivery.id), { concurrency: 4 });
      // Let the horizon loader's first pass finish: the task lands below its target, where
      // only the producer's own placement puts it in the wheel.
      await sleep(300);

      proxy!.cutAfter(scripts().get('schedule')!.sha);
      const runAt = Date.now() + 500;
      const [result] = await queue.scheduleMany([{ id: 'order-1', topic: 'orders', payload: { n: 1 }, runAt }]);
      assert.equal(proxy!.cuts, 1, 'the first reply was cut');
      // The call that answered is the second run: the first one had created the task.
      assert.deepEqual([result!.id, result!.runAt, result!.created], ['order-1', runAt, false]);
      assert.equal((await queue.stats()).counts.pending, 1, 'one task, not two');

      const deadline = Date.now() + 5_000;
      while (delivered.length === 0 && Date.now() < deadline) await sleep(20);
      assert.deepEqual(delivered, ['order-1'], 'the task fired');
    } finally {
      await queue.close();
    }
  });

  it('answers an ack whose reply was lost, sent again, with success: the ack completed the task', { timeout: 30_000 }, async () => {
    const queue = await DelayQueue.open({ store: `redis://127.0.0.1:${port}`, storeOptions: { prefix: 'lost-ack', shards: 4 } });
    try {
      await queue.scheduleMany([{ id: 'order-6', topic: 'orders', payload: { n: 6 }, runAt: Date.now() + 100, ttrMs: 60_000 }]);
      let delivery: Awaited<ReturnType<typeof queue.reserve>>[number] | undefined;
      const deadline = Date.now() + 5_000;
      while (delivery === undefined && Date.now() < deadline) [delivery] = await queue.reserve('orders', { waitMs: 500 });
      assert.ok(delivery, 'reserved');
      const cutsBefore = proxy!.cuts;
      proxy!.cutAfter(scripts().get('ack')!.sha);
      // The ack ran in Redis, its reply was cut; ioredis sends it again on the new
      // connection, where the task is completed already: that run answers acked too.
      await queue.ack(delivery.id, delivery.receipt);
      assert.equal(proxy!.cuts, cutsBefore + 1, 'the ack reply was cut');
      assert.equal((await queue.get('order-6'))?.state, 'completed');
      // The caller's own retry (its reply lost for good) is answered the same way.
      await queue.ack(delivery.id, delivery.receipt);
      await assert.rejects(queue.ack(delivery.id, `${delivery.receipt}x`), /STALE_RECEIPT|receipt/i);
      assert.equal((await queue.stats()).counts.completed, 1);
    } finally {
      await queue.close();
    }
  });

  it('hands a task reserved by a promote whose reply was lost to its consumer at once, not after its ttr', { timeout: 30_000 }, async () => {
    const queue = await DelayQueue.open({ store: `redis://127.0.0.1:${port}`, storeOptions: { prefix: 'lost-promote', shards: 4 } });
    try {
      const delivered: { id: string; attempt: number }[] = [];
      // An idle worker is asking for tasks, so the promote reserves the due task for it.
      queue.work('orders', (delivery) => void delivered.push({ id: delivery.id, attempt: delivery.attempt }), { concurrency: 4 });
      await sleep(300);
      const cutsBefore = proxy!.cuts;
      await queue.scheduleMany([{ id: 'order-2', topic: 'orders', payload: { n: 2 }, runAt: Date.now() + 300, ttrMs: 60_000 }]);
      proxy!.cutAfter(scripts().get('promote')!.sha);

      const deadline = Date.now() + 5_000;
      while (delivered.length === 0 && Date.now() < deadline) await sleep(20);
      assert.equal(proxy!.cuts, cutsBefore + 1, 'the promote reply was cut');
      // The reservation of the first run, handed back by the run ioredis sent again: the
      // same attempt, well before the 60 s ttr would have made it due again.
      assert.deepEqual(delivered, [{ id: 'order-2', attempt: 1 }]);
      assert.equal((await queue.stats()).counts.reserved + (await queue.stats()).counts.completed, 1);
    } finally {
      await queue.close();
    }
  });

  it('hands the tasks a reserve-ready call reserved before its reply was lost to the consumer at once, not after their ttr', { timeout: 30_000 }, async () => {
    const queue = await DelayQueue.open({ store: `redis://127.0.0.1:${port}`, storeOptions: { prefix: 'lost-reserve', shards: 4 } });
    try {
      // No consumer yet: the promote puts the due tasks in the topic's ready list, where
      // only a reserve-ready call reserves them. The last attempt of each: one lost would die undelivered.
      const ids = ['order-3', 'order-4', 'order-5'];
      await queue.scheduleMany(ids.map((id) => ({ id, topic: 'orders', payload: { id }, runAt: Date.now() + 100, ttrMs: 60_000, maxAttempts: 1 })));
      // Tasks in a ready list stay pending: wait past their runAt for the promote.
      await sleep(800);
      const cutsBefore = proxy!.cuts;
      proxy!.cutAfter(scripts().get('reserve-ready')!.sha);
      const delivered: { id: string; attempt: number }[] = [];
      queue.work('orders', (delivery) => void delivered.push({ id: delivery.id, attempt: delivery.attempt }), { concurrency: 4 });

      const deadline = Date.now() + 5_000;
      while (delivered.length < ids.length && Date.now() < deadline) await sleep(20);
      assert.equal(proxy!.cuts, cutsBefore + 1, 'the reserve-ready reply was cut');
      // The first run's reservations, handed back by the run ioredis sent again.
      assert.deepEqual(
        delivered.sort((a, b) => a.id.localeCompare(b.id)),
        ids.map((id) => ({ id, attempt: 1 })),
      );
      const stats = await queue.stats();
      assert.equal(stats.counts.dead, 0);
      assert.equal(stats.counts.reserved + stats.counts.completed, ids.length);
    } finally {
      await queue.close();
    }
  });
});
