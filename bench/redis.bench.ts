/**
 * npm run bench -- redis [--quick] [--skip-bullmq] [--skip-cluster]
 *
 * delayq's Redis store side by side with BullMQ 6.7.0 on the same Redis, which this
 * benchmark starts itself (a throwaway redis-server on a free port, no persistence, the
 * keyspace flushed between systems), then delayq alone on a 3-master Redis Cluster with
 * 1 and with 3 processes. 64-byte payloads throughout.
 *
 *   S1  schedule 100k delayed tasks in batches of 1,000                       tasks/s
 *   S2  100k tasks due within a 2 s window, consumed with concurrency 50      fired/s, lateness, duplicates, losses
 *   S3  5,000 tasks/s for 20 s with a 2 s delay                               lateness p50 / p99
 *   S4  1,000,000 pending                                                     Redis bytes per task, cancels/s of 10k
 *
 * Lateness = when the handler started - the task's due time.
 *
 * Each system first runs S2 on its cold process (reported on its own row: the first burst
 * while V8 still compiles the delivery path), then warms its cancels, unmeasured; S1-S4
 * then measure warm code, as a service that has been up a while runs (see warmDeliveries).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, Worker, type Job } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { DelayQueue } from '../src/open-queue.js';
import { percentile, preciseNow, printTable, writeResults, type Table } from './report.js';
import { startCluster, startRedis } from '../test/helpers/redis-servers.js';

const PAYLOAD = { p: 'x'.repeat(64 - '{"p":""}'.length) };

interface Scale {
  readonly s1: number;
  readonly s2: number;
  readonly s3Seconds: number;
  readonly s4: number;
  readonly cancels: number;
}

const FULL: Scale = { s1: 100_000, s2: 100_000, s3Seconds: 20, s4: 1_000_000, cancels: 10_000 };
const QUICK: Scale = { s1: 10_000, s2: 10_000, s3Seconds: 3, s4: 50_000, cancels: 2_000 };

interface Results {
  s1Rate: number;
  s2: FireStats;
  /** S2 as the first burst of a fresh process, before any warm-up (single Redis only). */
  s2Cold: FireStats | null;
  s3: FireStats;
  bytesPerTask: number;
  /** With ids as short as BullMQ's default ones (delayq's generated ids are 30 characters). */
  bytesPerTaskShortIds: number;
  cancelRate: number;
  /** Cancels through a bulk call (delayq's cancelMany, 1,000 ids a call); NaN without one. */
  bulkCancelRate: number;
}

interface FireStats {
  readonly firedPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly duplicates: number;
  readonly losses: number;
}

/** Delivery bookkeeping shared by both systems. */
class Tally {
  readonly lateness: number[] = [];
  readonly seen = new Map<string, number>();
  first = Infinity;
  last = 0;

  record(id: string, lateness: number): void {
    const now = preciseNow();
    this.first = Math.min(this.first, now);
    this.last = Math.max(this.last, now);
    const count = this.seen.get(id) ?? 0;
    this.seen.set(id, count + 1);
    if (count === 0) this.lateness.push(lateness);
  }

  async until(expected: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.seen.size < expected && Date.now() < deadline) await sleep(20);
    await sleep(200); // late duplicates
  }

  stats(expected: number, windowStart: number): FireStats {
    const sorted = Float64Array.from(this.lateness).sort();
    let duplicates = 0;
    for (const n of this.seen.values()) duplicates += n - 1;
    const span = Math.max(1, this.last - Math.max(windowStart, Math.min(this.first, windowStart)));
    return {
      firedPerSec: (this.seen.size / span) * 1_000,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted[sorted.length - 1] ?? NaN,
      duplicates,
      losses: expected - this.seen.size,
    };
  }
}

// ---------------------------------------------------------------------------------------
// The two systems behind one small interface

interface System {
  readonly name: string;
  /** False for BullMQ, whose default ids are already a short counter. */
  readonly generatesLongIds: boolean;
  /** Schedules `count` tasks on `topic` due at runAt(i), in batches of 1,000; returns ids. */
  schedule(topic: string, count: number, runAt: (i: number) => number, idOf?: (i: number) => string): Promise<string[]>;
  consume(topic: string, tally: Tally): Promise<() => Promise<void>>;
  cancel(id: string): Promise<void>;
  /** A bulk cancel, where the library has one (BullMQ has none for a list of ids). */
  cancelMany?(ids: string[]): Promise<void>;
  close(): Promise<void>;
}

async function openDelayq(url: string, prefix: string): Promise<System> {
  const queue = await DelayQueue.open({ store: url, storeOptions: { prefix } });
  return {
    name: 'delayq',
    generatesLongIds: true,
    async schedule(topic, count, runAt, idOf) {
      const ids: string[] = [];
      for (let from = 0; from < count; from += 1_000) {
        const n = Math.min(1_000, count - from);
        const results = await queue.scheduleMany(
          Array.from({ length: n }, (_, j) => ({ topic, payload: PAYLOAD, runAt: runAt(from + j), ...(idOf ? { id: idOf(from + j) } : {}) })),
        );
        for (const r of results) ids.push(r.id);
      }
      return ids;
    },
    async consume(topic, tally) {
      const worker = queue.work(topic, (d) => tally.record(d.id, preciseNow() - d.runAt), { concurrency: 50 });
      return () => worker.close();
    },
    async cancel(id) {
      await queue.cancel(id);
    },
    async cancelMany(ids) {
      await queue.cancelMany(ids);
    },
    close: () => queue.close(),
  };
}

async function openBullmq(port: number): Promise<System> {
  const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
  const queues = new Map<string, Queue>();
  const queueOf = (topic: string): Queue => {
    let queue = queues.get(topic);
    if (!queue) queues.set(topic, (queue = new Queue(topic, { connection })));
    return queue;
  };
  const workers: Worker[] = [];
  return {
    name: 'BullMQ 6.7.0',
    generatesLongIds: false,
    async schedule(topic, count, runAt) {
      const queue = queueOf(topic);
      const ids: string[] = [];
      for (let from = 0; from < count; from += 1_000) {
        const n = Math.min(1_000, count - from);
        const now = Date.now();
        const jobs = await queue.addBulk(
          Array.from({ length: n }, (_, j) => ({
            name: 'task',
            data: PAYLOAD,
            opts: { delay: Math.max(0, runAt(from + j) - now), timestamp: now, removeOnComplete: true },
          })),
        );
        for (const job of jobs) ids.push(job.id ?? '');
      }
      return ids;
    },
    async consume(topic, tally) {
      const worker = new Worker(
        topic,
        async (job: Job) => {
          tally.record(job.id ?? '', preciseNow() - (job.timestamp + (job.opts.delay ?? 0)));
        },
        { connection, concurrency: 50 },
      );
      workers.push(worker);
      return () => worker.close();
    },
    async cancel(id) {
      await queueOf('s4').remove(id);
    },
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all([...queues.values()].map((q) => q.close()));
    },
  };
}

// ---------------------------------------------------------------------------------------
// Scenarios

async function s1(system: System, scale: Scale): Promise<number> {
  const start = preciseNow();
  await system.schedule('s1', scale.s1, () => Date.now() + 3_600_000);
  return (scale.s1 / (preciseNow() - start)) * 1_000;
}

async function s2(system: System, scale: Scale, scheduleRate: number, topic = 's2'): Promise<FireStats> {
  const tally = new Tally();
  const stop = await system.consume(topic, tally);
  // The window opens once everything is scheduled (at the rate S1 measured, with slack).
  const windowStart = Date.now() + Math.ceil((scale.s2 / scheduleRate) * 1_000 * 1.5) + 1_000;
  await system.schedule(topic, scale.s2, (i) => windowStart + Math.floor((i / scale.s2) * 2_000));
  await tally.until(scale.s2, 120_000);
  await stop();
  return tally.stats(scale.s2, windowStart);
}

async function s3(system: System, scale: Scale): Promise<FireStats> {
  const tally = new Tally();
  const stop = await system.consume('s3', tally);
  const perTick = 50; // every 10 ms: 5,000/s
  const ticks = scale.s3Seconds * 100;
  const start = Date.now();
  const inFlight: Promise<unknown>[] = [];
  for (let k = 0; k < ticks; k++) {
    const wait = start + k * 10 - Date.now();
    if (wait > 0) await sleep(wait);
    inFlight.push(system.schedule('s3', perTick, () => Date.now() + 2_000));
  }
  await Promise.all(inFlight);
  await tally.until(ticks * perTick, 60_000);
  await stop();
  return tally.stats(ticks * perTick, start + 2_000);
}

async function s4(
  system: System,
  scale: Scale,
  admin: Redis,
): Promise<{ bytesPerTask: number; bytesPerTaskShortIds: number; cancelRate: number; bulkCancelRate: number }> {
  // Ids like BullMQ's own (a counter): the same key lengths on both sides.
  let bytesPerTaskShortIds = NaN;
  if (system.generatesLongIds) {
    await admin.flushall();
    const shortBefore = await usedMemory(admin);
    await system.schedule('s4', scale.s4, () => Date.now() + 3_600_000, (i) => `${i + 1}`);
    bytesPerTaskShortIds = ((await usedMemory(admin)) - shortBefore) / scale.s4;
  }
  await admin.flushall();
  const before = await usedMemory(admin);
  const ids = await system.schedule('s4', scale.s4, () => Date.now() + 3_600_000);
  const after = await usedMemory(admin);
  const step = Math.floor(scale.s4 / scale.cancels);
  const victims = ids.filter((_, i) => i % step === 0).slice(0, scale.cancels);
  const start = preciseNow();
  await cancelFiftyAtATime(system, victims);
  const cancelRate = (victims.length / (preciseNow() - start)) * 1_000;
  // Other tasks than the first victims, spread the same way.
  let bulkCancelRate = NaN;
  if (system.cancelMany) {
    const bulkVictims = ids.filter((_, i) => i % step === Math.floor(step / 2)).slice(0, scale.cancels);
    const bulkStart = preciseNow();
    for (let from = 0; from < bulkVictims.length; from += 1_000) await system.cancelMany(bulkVictims.slice(from, from + 1_000));
    bulkCancelRate = (bulkVictims.length / (preciseNow() - bulkStart)) * 1_000;
  }
  const bytesPerTask = (after - before) / scale.s4;
  if (!system.generatesLongIds) bytesPerTaskShortIds = bytesPerTask;
  return { bytesPerTask, bytesPerTaskShortIds, cancelRate, bulkCancelRate };
}

async function usedMemory(admin: Redis | Cluster): Promise<number> {
  const nodes = admin instanceof Cluster ? admin.nodes('master') : [admin];
  let total = 0;
  for (const node of nodes) total += Number(/used_memory:(\d+)/.exec(await node.info('memory'))?.[1] ?? 0);
  return total;
}

/** Cancels `ids` one call each, from 50 callers that each wait for their last answer. */
async function cancelFiftyAtATime(system: System, ids: readonly string[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < ids.length) await system.cancel(ids[next++]!);
    }),
  );
}

/*
 * Warm-ups run the paths the scenarios measure, unmeasured, before they start, the same for
 * every system: a service that has been up a while runs code V8 has compiled. Without them
 * S2 measures the JIT, whose late tasks all fall in the first moments of the window
 * (ADR 0020). On the single Redis the cold S2 itself warms the delivery path (and is
 * reported); the cluster runs, which measure no cancels, fire tasks.
 */

/** Fires and acks a burst of tasks on a topic of its own. */
async function warmDeliveries(system: System, scale: Scale): Promise<void> {
  const count = scale === QUICK ? 2_000 : 10_000;
  const tally = new Tally();
  const stop = await system.consume('warmup', tally);
  const start = Date.now() + 300;
  await system.schedule('warmup', count, (i) => start + Math.floor((i / count) * 500));
  await tally.until(count, 60_000);
  await stop();
}

/** Single and bulk cancels, on S4's topic, which S4 empties (FLUSHALL) before it measures: BullMQ cancels there. */
async function warmCancels(system: System, scale: Scale): Promise<void> {
  const ids = await system.schedule('s4', (2 * scale.cancels) / 5, () => Date.now() + 3_600_000);
  await cancelFiftyAtATime(system, ids.slice(0, ids.length / 2));
  if (system.cancelMany) await system.cancelMany(ids.slice(ids.length / 2));
}

/** The schedule rate assumed for the cold S2's window: below any system's cold S1 here. */
const COLD_SCHEDULE_RATE = 20_000;

async function runAll(system: System, scale: Scale, admin: Redis | null): Promise<Results> {
  log(`${system.name}: S2 cold (the process's first burst)`);
  const s2Cold = await s2(system, scale, COLD_SCHEDULE_RATE, 's2cold');
  log(`${system.name}: S2 cold ${JSON.stringify(s2Cold)}; warm-up`);
  await warmCancels(system, scale);
  log(`${system.name}: S1`);
  const s1Rate = await s1(system, scale);
  log(`${system.name}: S1 ${Math.round(s1Rate)}/s; S2`);
  const s2Stats = await s2(system, scale, s1Rate);
  log(`${system.name}: S2 ${JSON.stringify(s2Stats)}; S3`);
  const s3Stats = await s3(system, scale);
  log(`${system.name}: S3 ${JSON.stringify(s3Stats)}; S4`);
  const s4Stats = admin ? await s4(system, scale, admin) : { bytesPerTask: NaN, bytesPerTaskShortIds: NaN, cancelRate: NaN, bulkCancelRate: NaN };
  log(`${system.name}: S4 ${JSON.stringify(s4Stats)}`);
  return { s1Rate, s2: s2Stats, s2Cold, s3: s3Stats, ...s4Stats };
}

function log(message: string): void {
  console.error(`[redis bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

// ---------------------------------------------------------------------------------------
// 3 processes: this one (producer + consumer) and two consumer children

async function startChildren(url: string, prefix: string, topic: string, tally: Tally): Promise<ChildProcess[]> {
  const children: ChildProcess[] = [];
  const ready: Promise<void>[] = [];
  for (let n = 0; n < 2; n++) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/redis-child.ts', url, prefix, topic], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const lines = createInterface({ input: child.stdout });
    ready.push(
      new Promise<void>((resolve) =>
        lines.on('line', (line) => {
          if (line === 'READY') return resolve();
          const [tag, id, lateness] = line.split(' ');
          if (tag === 'L' && id !== undefined) tally.record(id, Number(lateness));
        }),
      ),
    );
  }
  await Promise.all(ready);
  return children;
}

async function stopChildren(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
}

async function clusterRun(url: string, processes: 1 | 3, scale: Scale): Promise<Results> {
  const prefix = `bench${processes}`;
  const system = await openDelayq(url, prefix);
  const withChildren: System = {
    ...system,
    async consume(topic, tally) {
      const stop = await system.consume(topic, tally);
      if (processes === 1) return stop;
      const children = await startChildren(url, prefix, topic, tally);
      await sleep(2_500); // let the shards rebalance over the 3 processes
      return async () => {
        await stop();
        await stopChildren(children);
      };
    },
  };
  log(`cluster, ${processes} process(es)`);
  await warmDeliveries(system, scale);
  const s1Rate = await s1(withChildren, scale);
  const s2Stats = await s2(withChildren, scale, s1Rate);
  log(`S2 ${JSON.stringify(s2Stats)}`);
  const s3Stats = await s3(withChildren, scale);
  log(`S3 ${JSON.stringify(s3Stats)}`);
  await system.close();
  return { s1Rate, s2: s2Stats, s2Cold: null, s3: s3Stats, bytesPerTask: NaN, bytesPerTaskShortIds: NaN, cancelRate: NaN, bulkCancelRate: NaN };
}

// ---------------------------------------------------------------------------------------

const fmt = (n: number, digits = 1): string => (Number.isFinite(n) ? (Math.abs(n) >= 1_000 ? Math.round(n).toLocaleString('en-US') : n.toFixed(digits)) : '-');

function rows(results: readonly Results[]): (string | number)[][] {
  const pick = (f: (r: Results) => string): string[] => results.map(f);
  return [
    ['S1 schedule, tasks/s', ...pick((r) => fmt(r.s1Rate))],
    ['S2 fired/s', ...pick((r) => fmt(r.s2.firedPerSec))],
    ['S2 lateness p50 / p99 / max, ms', ...pick((r) => `${fmt(r.s2.p50)} / ${fmt(r.s2.p99)} / ${fmt(r.s2.max)}`)],
    ['S2 duplicates / losses', ...pick((r) => `${r.s2.duplicates} / ${r.s2.losses}`)],
    ['S3 lateness p50 / p99, ms', ...pick((r) => `${fmt(r.s3.p50)} / ${fmt(r.s3.p99)}`)],
    ['S3 duplicates / losses', ...pick((r) => `${r.s3.duplicates} / ${r.s3.losses}`)],
    ['S4 Redis bytes per pending task', ...pick((r) => fmt(r.bytesPerTask, 0))],
    ['S4 same, ids as short as BullMQ\'s (1..1M)', ...pick((r) => fmt(r.bytesPerTaskShortIds, 0))],
    ['S4 cancels/s (10k of 1M), 50 concurrent single cancels', ...pick((r) => fmt(r.cancelRate))],
    ['S4 cancels/s (another 10k), bulk: cancelMany of 1,000 ids', ...pick((r) => fmt(r.bulkCancelRate))],
    [
      'S2 on a cold process (its first burst, before the warm-up): p50 / p99 / max, ms',
      ...pick((r) => (r.s2Cold ? `${fmt(r.s2Cold.p50)} / ${fmt(r.s2Cold.p99)} / ${fmt(r.s2Cold.max)}` : '-')),
    ],
  ];
}

export async function run(args: string[]): Promise<void> {
  const scale = args.includes('--quick') ? QUICK : FULL;
  const tables: Table[] = [];
  const notes = [
    `Node ${process.version}, Redis ${await redisVersion()}, 64-byte payloads, ${scale === QUICK ? 'QUICK scale (not the reference figures)' : 'full scale'}.`,
    'The machine has 2 cores shared by Redis, the benchmark process(es) and other work running at the same time: absolute figures are noisy; compare columns within one run.',
  ];

  if (!args.includes('--skip-single')) {
    const server = await startRedis();
    const admin = new Redis(server.port, '127.0.0.1');
    try {
      const results: Results[] = [];
      const names: string[] = [];
      if (!args.includes('--skip-bullmq')) {
        const bull = await openBullmq(server.port);
        results.push(await runAll(bull, scale, admin));
        names.push(bull.name);
        await bull.close();
        await admin.flushall();
      }
      const delayq = await openDelayq(server.url, 'bench');
      results.push(await runAll(delayq, scale, admin));
      names.push('delayq');
      await delayq.close();
      const table: Table = {
        title: `Redis store vs BullMQ on one Redis (${server.url})`,
        columns: ['scenario', ...names, ...(names.length === 2 ? ['delayq / BullMQ'] : [])],
        rows: rows(results).map((row, index) => {
          if (results.length !== 2) return row;
          const [b, d] = results as [Results, Results];
          const ratio = [
            d.s1Rate / b.s1Rate,
            d.s2.firedPerSec / b.s2.firedPerSec,
            NaN,
            NaN,
            NaN,
            NaN,
            d.bytesPerTask / b.bytesPerTask,
            d.bytesPerTaskShortIds / b.bytesPerTask,
            d.cancelRate / b.cancelRate,
            // Against BullMQ's best, its single cancels: it has no bulk cancel of listed ids.
            d.bulkCancelRate / b.cancelRate,
            NaN,
          ][index];
          return [...row, ratio === undefined || Number.isNaN(ratio) ? '' : `${ratio.toFixed(2)}x`];
        }),
        notes,
      };
      printTable(table);
      tables.push(table);
    } finally {
      await admin.quit();
      await server.stop();
      server.remove();
    }
  }

  if (!args.includes('--skip-cluster')) {
    const cluster = await startCluster(3);
    try {
      const one = await clusterRun(cluster.url, 1, scale);
      const three = await clusterRun(cluster.url, 3, scale);
      const table: Table = {
        title: 'delayq on a 3-master Redis Cluster (16 shards)',
        columns: ['scenario', '1 process', '3 processes'],
        rows: rows([one, three]).slice(0, 6),
        notes: [...notes, '3 processes: this one schedules and consumes, two more consume; all share the 16 shards by lease.'],
      };
      printTable(table);
      tables.push(table);
    } finally {
      await cluster.stop();
    }
  }
  const file = writeResults('redis', tables, { scale });
  console.log(`\nresults: ${file}`);
}

async function redisVersion(): Promise<string> {
  const { execFileSync } = await import('node:child_process');
  return /v=(\S+)/.exec(execFileSync('redis-server', ['--version'], { encoding: 'utf8' }))?.[1] ?? '?';
}
