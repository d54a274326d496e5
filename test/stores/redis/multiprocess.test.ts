/**
 * Three delayq processes share one Redis namespace (plus this test process, which only
 * produces). One is SIGKILLed mid-run: its shards are taken over within the lease time
 * and its unacked reservations are redelivered. Every task must be delivered, none before
 * its runAt; duplicates (deliveries cut short by the kill) are counted and printed.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DelayQueue } from '../../../src/open-queue.js';
import { FactsTail } from '../../../src/testing/facts-file.js';
import { redisSkip, startRedis, type RedisServer } from '../../helpers/redis-servers.js';

const skip = redisSkip();
const TASKS = 3_000;
const children: ChildProcess[] = [];
let server: RedisServer | undefined;

interface Delivery {
  readonly runAt: number;
  readonly at: number;
  readonly child: number;
}

describe('redis store shared by several processes', { skip }, () => {
  after(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await server?.stop();
    server?.remove();
  });

  it('delivers every task, none early, when one of 3 processes is killed mid-run', { timeout: 90_000 }, async (t) => {
    server = await startRedis();
    const prefix = 'mp';
    const deliveries = new Map<string, Delivery[]>();
    const ready: Promise<void>[] = [];
    const factsDir = mkdtempSync(join(tmpdir(), 'delayq-mp-'));
    const tails: FactsTail[] = [];
    for (let n = 0; n < 3; n++) {
      const factsPath = join(factsDir, `child-${n}.facts`);
      tails.push(new FactsTail(factsPath));
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/stores/redis/fixtures/mp-child.ts', server.url, prefix, factsPath], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(child);
      const lines = createInterface({ input: child.stdout });
      ready.push(new Promise<void>((resolve) => lines.on('line', (line) => line === 'READY' && resolve())));
    }
    // Deliveries come through each child's facts file, which a SIGKILL does not cut short.
    const poll = (): void =>
      tails.forEach((tail, n) => {
        for (const line of tail.poll()) {
          const [tag, id, runAt, at] = line.split(' ');
          if (tag !== 'D' || id === undefined) continue;
          const list = deliveries.get(id) ?? [];
          list.push({ runAt: Number(runAt), at: Number(at), child: n });
          deliveries.set(id, list);
        }
      });
    const poller = setInterval(poll, 20);
    t.after(() => {
      clearInterval(poller);
      for (const tail of tails) tail.close();
      rmSync(factsDir, { recursive: true, force: true });
    });
    await Promise.all(ready);

    // The producer: this process (it owns a share of the shards too, but runs no consumer).
    const producer = await DelayQueue.open({ store: server.url, storeOptions: { prefix } });
    const start = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < TASKS; i += 250) {
      const batch = Array.from({ length: 250 }, (_, j) => ({
        id: `mp-${i + j}`,
        topic: 'mp',
        payload: null,
        runAt: start + 500 + Math.floor(((i + j) / TASKS) * 8_000),
        ttrMs: 2_000,
      }));
      await producer.scheduleMany(batch);
      ids.push(...batch.map((b) => b.id));
    }

    await sleep(3_000);
    const victim = children[1]!;
    victim.kill('SIGKILL');
    const killedAt = Date.now();

    const deadline = Date.now() + 40_000;
    while (ids.some((id) => !deliveries.has(id)) && Date.now() < deadline) await sleep(100);
    await sleep(500);

    poll();
    const missing = ids.filter((id) => !deliveries.has(id));
    const early = [...deliveries.values()].flat().filter((d) => d.at < d.runAt);
    const duplicates = [...deliveries.values()].filter((list) => list.length > 1).length;
    const lateness = [...deliveries.values()].map((list) => list[0]!.at - list[0]!.runAt).sort((a, b) => a - b);
    const pct = (p: number): number => lateness[Math.min(lateness.length - 1, Math.floor((p / 100) * lateness.length))] ?? NaN;
    const perChild = [0, 1, 2].map((n) => [...deliveries.values()].flat().filter((d) => d.child === n).length);
    console.log(
      `# ${TASKS} tasks, process 1 killed at +${killedAt - start} ms: delivered ${deliveries.size}, missing ${missing.length}, ` +
        `early ${early.length}, duplicates ${duplicates}, deliveries per process ${perChild.join('/')}, ` +
        `lateness p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${pct(100)} ms`,
    );
    await producer.close();
    for (const child of children) if (child !== victim) child.kill('SIGTERM');

    assert.deepEqual(missing, [], 'every task delivered');
    assert.deepEqual(early, [], 'no task delivered before its runAt');
    assert.ok(perChild[0]! > 0 && perChild[2]! > 0, 'the surviving processes both consumed');
  });
});
