/**
 * One run for bench/delivery-cost.bench.ts, in a process of its own so that the same file can
 * run against another checkout (--base): `tasks` tasks of 64-byte payloads due at one instant
 * on a Redis, drained by one worker of concurrency 50 (after a warm-up drain of a tenth as
 * many). Measured over the drain only, from the first due time to the last delivery: this
 * process's CPU, the Redis server's CPU (INFO cpu) and each script's time (SLOWLOG at a
 * threshold of 0, named by the scripts' SHA1), each per delivery, and each script's calls.
 * Prints one JSON line.
 * Imports nothing but the queue, the script table and ioredis, which every checkout has.
 *
 *   node --import tsx bench/delivery-cost-child.ts <redis url> <prefix> <tasks>
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { DelayQueue } from '../src/open-queue.js';
import { scripts } from '../src/stores/redis/scripts.js';

const [url = '', prefix = 'c', tasksText = '100000'] = process.argv.slice(2);
const tasks = Number(tasksText);
const PAYLOAD = { p: 'x'.repeat(64 - '{"p":""}'.length) };
const scriptOf = new Map([...scripts().values()].map((s) => [s.sha, s.name]));

const admin = new Redis(url);
const queue = await DelayQueue.open({ store: url, storeOptions: { prefix } });

async function redisCpuUs(): Promise<number> {
  const info = await admin.info('cpu');
  const field = (name: string): number => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
}

async function drain(
  topic: string,
  count: number,
): Promise<{ firedPerSec: number; nodeUs: number; redisUs: number; scriptsUs: Record<string, number>; scriptCalls: Record<string, number> }> {
  let delivered = 0;
  let first = 0;
  let last = 0;
  const worker = queue.work(topic, () => {
    const now = performance.now();
    if (delivered++ === 0) first = now;
    last = now;
  }, { concurrency: 50 });
  const dueAt = Date.now() + 4_000 + Math.ceil(count / 20);
  for (let from = 0; from < count; from += 1_000) {
    const n = Math.min(1_000, count - from);
    await queue.scheduleMany(Array.from({ length: n }, () => ({ topic, payload: PAYLOAD, runAt: dueAt })));
  }
  while (Date.now() < dueAt - 100) await sleep(10);
  await admin.config('SET', 'slowlog-max-len', String(1_000_000));
  await admin.config('SET', 'slowlog-log-slower-than', '0');
  await admin.slowlog('RESET');
  const cpu = process.cpuUsage();
  const redisBefore = await redisCpuUs();
  const deadline = Date.now() + 120_000;
  while (delivered < count && Date.now() < deadline) await sleep(10);
  const nodeCpu = process.cpuUsage(cpu);
  const redisUs = (await redisCpuUs()) - redisBefore;
  await admin.config('SET', 'slowlog-log-slower-than', '10000');
  const entries = (await admin.slowlog('GET', -1)) as [number, number, number, string[]][];
  await worker.close();
  const scriptsUs: Record<string, number> = Object.create(null) as Record<string, number>;
  const scriptCalls: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const [, , micros, args] of entries) {
    if (args[0]?.toLowerCase() !== 'evalsha') continue;
    const name = scriptOf.get(args[1] ?? '') ?? 'other';
    scriptsUs[name] = (scriptsUs[name] ?? 0) + micros / count;
    scriptCalls[name] = (scriptCalls[name] ?? 0) + 1;
  }
  if (delivered < count) throw new Error(`only ${delivered} of ${count} delivered`);
  return { firedPerSec: (count / (last - first)) * 1_000, nodeUs: (nodeCpu.user + nodeCpu.system) / count, redisUs: redisUs / count, scriptsUs, scriptCalls };
}

await drain('warm', Math.max(1_000, Math.round(tasks / 10)));
const result = await drain('drain', tasks);
await queue.close();
admin.disconnect();
console.log(JSON.stringify(result));
