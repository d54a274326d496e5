/**
 * Three delayq service processes on one private Redis, a schedule every second: every
 * occurrence is delivered and acked exactly once and none is missing; and the same while
 * one of the processes (the one the schedule was set through) is SIGKILLed mid-way. The
 * test process consumes through the servers' HTTP API with the client.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DelayQClient } from '../../src/client/index.js';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis-servers.js';
import { spawnServer, type SpawnedServer } from '../helpers/service-process.js';

const skip = redisSkip();
const servers: SpawnedServer[] = [];
let redis: RedisServer | undefined;

interface Ack {
  readonly id: string;
  readonly runAt: number;
  readonly at: number;
  readonly server: number;
}

/**
 * Reserves and acks `topic` through one server until `stop` or the server dies. An ack that
 * got no answer (its server killed) may have been committed: it is sent again through another
 * server (an ack repeated with the receipt that completed the task succeeds), so a kill
 * between commit and reply is not counted as a missing occurrence. If the reservation ran
 * out meanwhile, the retry is refused and the task's redelivery is acked elsewhere.
 */
async function consume(clients: readonly DelayQClient[], topic: string, server: number, acks: Ack[], stop: AbortSignal): Promise<void> {
  const client = clients[server]!;
  while (!stop.aborted) {
    try {
      for (const d of await client.reserve(topic, { max: 10, waitMs: 500 })) {
        const at = Date.now();
        try {
          await client.ack(d.id, d.receipt);
        } catch {
          const other = clients[(server + 1) % clients.length]!;
          if ((await other.ackMany([{ id: d.id, receipt: d.receipt }]))[0] !== 'acked') continue;
        }
        acks.push({ id: d.id, runAt: d.runAt, at, server });
      }
    } catch {
      if (servers[server]?.child.exitCode !== null || servers[server]?.child.signalCode !== null) return; // killed
      await sleep(100);
    }
  }
}

async function run(prefix: string, seconds: number, killAfterMs: number | null): Promise<void> {
  const url = `${redis!.url}?prefix=${prefix}`;
  const group = await Promise.all([0, 1, 2].map(() => spawnServer(['--store', url])));
  servers.length = 0;
  servers.push(...group);
  const clients = group.map((s) => new DelayQClient({ url: s.address, timeoutMs: 5_000 }));
  const startAt = Math.ceil(Date.now() / 1_000) * 1_000 + 6_000; // every process has read the schedule by then (scheduleSyncMs 5 s)
  const endAt = startAt + seconds * 1_000;
  const { schedule } = await clients[0]!.schedules.upsert('tick', { topic: 'cron-mp', everyMs: 1_000, startAt, endAt, ttrMs: 3_000 });
  assert.equal(schedule.everyMs, 1_000);
  const acks: Ack[] = [];
  const stop = new AbortController();
  const consumers = clients.map((_, i) => consume(clients, 'cron-mp', i, acks, stop.signal));
  if (killAfterMs !== null) {
    await sleep(Math.max(0, startAt + killAfterMs - Date.now()));
    group[0]!.child.kill('SIGKILL');
  }
  const expected = Array.from({ length: seconds }, (_, i) => `tick:${startAt + i * 1_000}`);
  const deadline = endAt + 15_000; // a killed process's shards are taken over within 5 s
  while (Date.now() < deadline && new Set(acks.map((a) => a.id)).size < expected.length) await sleep(200);
  await sleep(1_500); // a late duplicate would show now
  stop.abort();
  await Promise.all(consumers);
  await Promise.all(group.map((s) => s.stop('SIGTERM')));

  const ids = acks.map((a) => a.id);
  assert.equal(new Set(ids).size, ids.length, `acked exactly once (${ids.length} acks)`);
  assert.deepEqual([...ids].sort(), [...expected].sort(), 'every occurrence, none missing, none extra');
  for (const a of acks) assert.ok(a.at >= a.runAt, `${a.id} delivered before its time`);
  const servedBy = new Set(acks.map((a) => a.server));
  assert.ok(servedBy.size >= 2, 'the occurrences were spread over the processes');
}

describe('a schedule on three service processes sharing one Redis', { skip }, () => {
  after(async () => {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    await redis?.stop();
    redis?.remove();
  });

  it('every occurrence delivered and acked exactly once over 20 s', { timeout: 90_000 }, async () => {
    redis ??= await startRedis();
    await run('cron-a', 20, null);
  });

  it('the same while the process the schedule was set through is SIGKILLed mid-way', { timeout: 90_000 }, async () => {
    redis ??= await startRedis();
    await run('cron-b', 20, 10_000);
  });
});
