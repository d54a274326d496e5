/**
 * S3, the paced load several benchmarks share (flow, priority): 5,000 tasks/s of 64-byte
 * payloads for `seconds` (50 every 10 ms), each due 2 s after it is scheduled, on topic
 * `s3` of `queue`, worked with concurrency 50; lateness is the handler's start minus runAt.
 * Imports nothing from src/ but the queue's type, so priority.bench.ts can copy it beside
 * its child into another checkout (--base).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { DelayQueue } from '../src/open-queue.js';

const PAYLOAD = { p: 'x'.repeat(64 - '{"p":""}'.length) };
const now = (): number => performance.timeOrigin + performance.now();

export async function s3PacedLateness(queue: DelayQueue, seconds: number): Promise<{ p50: number; p99: number; losses: number }> {
  const lateness: number[] = [];
  const worker = queue.work('s3', (d) => void lateness.push(now() - d.runAt), { concurrency: 50 });
  const perTick = 50;
  const ticks = seconds * 100;
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
