/**
 * One S3 run for bench/priority.bench.ts, in a process of its own so that the same file can
 * run against another checkout (--base): 5,000 tasks/s of 64-byte payloads for `seconds`,
 * each due 2 s after it is scheduled, on a topic without priorities, one queue, a worker of
 * concurrency 50. Prints one JSON line: {p50, p99, losses}. Imports nothing but the queue.
 *
 *   node --import tsx bench/priority-s3-child.ts <redis url> <prefix> <seconds>
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { DelayQueue } from '../src/open-queue.js';

const [url = '', prefix = 'p', secondsText = '10'] = process.argv.slice(2);
const seconds = Number(secondsText);
const PAYLOAD = { p: 'x'.repeat(64 - '{"p":""}'.length) };
const now = (): number => performance.timeOrigin + performance.now();

async function s3(queue: DelayQueue, s: number): Promise<{ p50: number; p99: number; losses: number }> {
  const lateness: number[] = [];
  const worker = queue.work('s3', (d) => void lateness.push(now() - d.runAt), { concurrency: 50 });
  const perTick = 50;
  const ticks = s * 100;
  const started = Date.now();
  const inFlight: Promise<unknown>[] = [];
  for (let t = 0; t < ticks; t++) {
    inFlight.push(queue.scheduleMany(Array.from({ length: perTick }, () => ({ topic: 's3', payload: PAYLOAD, runAt: Date.now() + 2_000 }))));
    await sleep(Math.max(0, started + (t + 1) * 10 - Date.now()));
  }
  await Promise.all(inFlight);
  const expected = ticks * perTick;
  const deadline = Date.now() + 30_000;
  while (lateness.length < expected && Date.now() < deadline) await sleep(50);
  await worker.close();
  const sorted = Float64Array.from(lateness).sort();
  const at = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
  return { p50: at(50), p99: at(99), losses: expected - lateness.length };
}

const queue = await DelayQueue.open({ store: url, storeOptions: { prefix } });
await s3(queue, 2); // warm the delivery path
const result = await s3(queue, seconds);
await queue.close();
console.log(JSON.stringify(result));
