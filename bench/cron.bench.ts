/**
 * npm run bench -- cron [--quick]
 *
 * Recurring schedules: delayq's schedules side by side with BullMQ 6.7.0's job schedulers
 * (`upsertJobScheduler`) on the same Redis, which this benchmark starts itself (a
 * throwaway redis-server, no persistence, flushed between systems). Each figure is the
 * median of three runs; each run opens a fresh queue on an empty Redis.
 *
 *   U  upserts/s of 10,000 schedules (every 60 s, 64-byte payload), 200 calls in flight;
 *      delayq also with upsertMany (calls of 1,000 definitions, 2 in flight)
 *   M  Redis bytes per schedule: used_memory after U minus before, / 10,000 (each system
 *      holds its schedules and the next occurrence of each as a delayed job / pending task)
 *   L  lateness of occurrences when 10,000 schedules fire every second, for 10 s,
 *      consumed with concurrency 100: handler start - the occurrence's time (p50, p99).
 *      "aligned": all 10,000 on the whole second (a burst of 10,000 due on one ms each
 *      second); "spread": schedule i i/10 ms into the second (a steady 10,000 a second).
 *      The burst rate is 10,000 / the median (over the seconds) of the time from the whole
 *      second to the last delivery of its burst: how fast one process drains a burst.
 *   F  the floor, same run: delayq delivering the very same occurrences as plain tasks
 *      created up front (no schedule loop running), so the table shows what planning adds
 *      to the lateness of delivery itself on this machine.
 *
 * `--schedules n` changes the number of schedules (a smaller run on a loaded host).
 *
 * npm run bench -- cron --processes 3 [--quick]: the spread case in child processes
 * (bench/cron-child.ts) on one Redis, each consuming with concurrency 100: delayq's
 * schedules in 1 process and in N processes, and the floor (plain tasks) in N processes.
 * Each child reports its CPU time (process.cpuUsage) over the measured window, so the
 * table shows the planning CPU per process (schedules minus floor) and the lateness.
 * The schedules are upserted through the first child; the window starts 11 s later, once
 * every process has read them (scheduleSyncMs is 5 s), and lasts `fireSeconds`.
 */
import { Queue, Worker } from 'bullmq';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { DelayQueue } from '../src/open-queue.js';
import { startRedis } from '../test/helpers/redis-servers.js';
import { percentile, preciseNow, printTable, writeResults, type Table } from './report.js';

const PAYLOAD = { p: 'x'.repeat(64 - '{"p":""}'.length) };

interface Scale {
  readonly schedules: number;
  readonly fireSeconds: number;
  readonly runs: number;
}
const FULL: Scale = { schedules: 10_000, fireSeconds: 10, runs: 3 };
const QUICK: Scale = { schedules: 2_000, fireSeconds: 4, runs: 1 };

interface RunResult {
  readonly upsertsPerSec: number;
  /** upsertMany (delayq only; NaN for BullMQ, which has no batch upsert of job schedulers). */
  readonly batchUpsertsPerSec: number;
  /** Deliveries per second while draining an aligned burst of 10,000. */
  readonly burstRate: number;
  readonly bytesPerSchedule: number;
  readonly fired: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly duplicates: number;
  /** Lateness with the schedules' phases spread over the second. */
  readonly spreadP50: number;
  readonly spreadP99: number;
}

interface System {
  readonly name: string;
  upsertAll(n: number, everyMs: number, startAt: (i: number) => number): Promise<void>;
  upsertMany?(n: number, everyMs: number, startAt: (i: number) => number): Promise<void>;
  consume(onFire: (key: string, lateness: number, due: number) => void): Promise<void>;
  close(): Promise<void>;
}

async function inFlight(n: number, width: number, call: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) await call(next++);
  }));
}

async function openDelayq(url: string): Promise<System> {
  const q = await DelayQueue.open({ store: `${url}?prefix=cronbench` });
  return {
    name: 'delayq',
    async upsertAll(n, everyMs, startAt) {
      await inFlight(n, 200, (i) => q.schedules.upsert(`s${i}`, { topic: 'cron', everyMs, payload: PAYLOAD, startAt: startAt(i) }));
    },
    async upsertMany(n, everyMs, startAt) {
      const defs = Array.from({ length: n }, (_, i) => ({ id: `s${i}`, topic: 'cron', everyMs, payload: PAYLOAD, startAt: startAt(i) }));
      await inFlight(Math.ceil(n / 1_000), 2, (b) => q.schedules.upsertMany(defs.slice(b * 1_000, (b + 1) * 1_000)));
    },
    async consume(onFire) {
      q.work('cron', (d) => onFire(d.id, preciseNow() - d.runAt, d.runAt), { concurrency: 100 });
    },
    close: () => q.close(),
  };
}

/** The floor: the occurrences of `seconds` seconds as plain tasks, created before they fire; no schedule. */
async function openTasks(url: string, seconds: number): Promise<System> {
  const q = await DelayQueue.open({ store: `${url}?prefix=cronbench` });
  return {
    name: 'delayq plain tasks (floor)',
    async upsertAll(n, everyMs, startAt) {
      for (let k = 0; k < seconds; k++)
        await inFlight(Math.ceil(n / 1_000), 2, (b) =>
          q.scheduleMany(
            Array.from({ length: Math.min(1_000, n - b * 1_000) }, (_, j) => {
              const runAt = startAt(b * 1_000 + j) + k * everyMs;
              return { id: `s${b * 1_000 + j}:${runAt}`, topic: 'cron', payload: PAYLOAD, runAt };
            }),
          ),
        );
    },
    async consume(onFire) {
      q.work('cron', (d) => onFire(d.id, preciseNow() - d.runAt, d.runAt), { concurrency: 100 });
    },
    close: () => q.close(),
  };
}

async function openBullmq(port: number): Promise<System> {
  const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
  const queue = new Queue('cron', { connection });
  let worker: Worker | null = null;
  return {
    name: 'BullMQ 6.7.0 job schedulers',
    async upsertAll(n, everyMs, startAt) {
      await inFlight(n, 200, (i) =>
        queue.upsertJobScheduler(`s${i}`, { every: everyMs, startDate: startAt(i) }, { name: 'tick', data: PAYLOAD, opts: { removeOnComplete: true } }),
      );
    },
    async consume(onFire) {
      worker = new Worker(
        'cron',
        async (job) => {
          const due = job.timestamp + (job.opts.delay ?? 0);
          onFire(`${job.id}`, preciseNow() - due, due);
        },
        { connection, concurrency: 100 },
      );
      await worker.waitUntilReady();
    },
    close: async () => {
      await worker?.close();
      await queue.close();
    },
  };
}

async function usedMemory(admin: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await admin.info('memory'))?.[1] ?? 0);
}

async function runOnce(open: () => Promise<System>, admin: Redis, scale: Scale): Promise<RunResult> {
  await admin.flushall();
  const before = await usedMemory(admin);
  // U and M: schedules every 60 s, none fires during the measurement.
  const system = await open();
  const t0 = preciseNow();
  const later = Date.now() + 60_000;
  await system.upsertAll(scale.schedules, 60_000, () => later);
  const upsertsPerSec = scale.schedules / ((preciseNow() - t0) / 1_000);
  await sleep(500);
  const bytesPerSchedule = ((await usedMemory(admin)) - before) / scale.schedules;
  await system.close();
  let batchUpsertsPerSec = NaN;
  if (system.upsertMany !== undefined) {
    await admin.flushall();
    const again = await open();
    const t1 = preciseNow();
    await again.upsertMany!(scale.schedules, 60_000, () => later);
    batchUpsertsPerSec = scale.schedules / ((preciseNow() - t1) / 1_000);
    await again.close();
  }

  const aligned = await fire(open, admin, scale, () => 0);
  // The same rate spread over each second (schedule i starts i/10 ms into it): a steady 10,000/s.
  const spread = await fire(open, admin, scale, (i) => Math.floor((i * 1_000) / scale.schedules));
  return { upsertsPerSec, batchUpsertsPerSec, bytesPerSchedule, ...aligned, spreadP50: spread.p50, spreadP99: spread.p99 };
}

/** The floor: aligned and spread lateness of the same occurrences as plain tasks. */
async function runFloor(open: () => Promise<System>, admin: Redis, scale: Scale): Promise<RunResult> {
  const aligned = await fire(open, admin, scale, () => 0);
  const spread = await fire(open, admin, scale, (i) => Math.floor((i * 1_000) / scale.schedules));
  return { upsertsPerSec: NaN, batchUpsertsPerSec: NaN, bytesPerSchedule: NaN, ...aligned, spreadP50: spread.p50, spreadP99: spread.p99 };
}

/** Every schedule fires every second for fireSeconds, schedule i `phase(i)` ms into each second. */
async function fire(
  open: () => Promise<System>,
  admin: Redis,
  scale: Scale,
  phase: (i: number) => number,
): Promise<Omit<RunResult, 'upsertsPerSec' | 'batchUpsertsPerSec' | 'bytesPerSchedule' | 'spreadP50' | 'spreadP99'>> {
  await admin.flushall();
  const system = await open();
  const lateness: number[] = [];
  const seen = new Map<string, number>();
  let duplicates = 0;
  /** Per second: the latest delivery of its occurrences, in ms after the second began. */
  const drain = new Map<number, number>();
  const start = Math.ceil(Date.now() / 1_000) * 1_000 + 3_000;
  const end = start + scale.fireSeconds * 1_000;
  await system.consume((key, late, due) => {
    const count = seen.get(key) ?? 0;
    seen.set(key, count + 1);
    if (count > 0) duplicates++;
    else lateness.push(late);
    const second = Math.floor(due / 1_000) * 1_000;
    drain.set(second, Math.max(drain.get(second) ?? 0, due + late - second));
  });
  await system.upsertAll(scale.schedules, 1_000, (i) => start + phase(i));
  await sleep(Math.max(0, end - Date.now()) + 2_000);
  await system.close();
  lateness.sort((a, b) => a - b);
  const burstRate = (scale.schedules / median([...drain.values()])) * 1_000;
  return { fired: lateness.length, p50: percentile(lateness, 50), p99: percentile(lateness, 99), max: lateness[lateness.length - 1] ?? NaN, duplicates, burstRate };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

export async function run(args: string[]): Promise<void> {
  const base = args.includes('--quick') ? QUICK : FULL;
  const schedulesAt = args.indexOf('--schedules');
  const scale = schedulesAt >= 0 ? { ...base, schedules: Number(args[schedulesAt + 1]) } : base;
  const processesAt = args.indexOf('--processes');
  if (processesAt >= 0) return runProcesses(scale, Number(args[processesAt + 1] ?? 3));
  const redis = await startRedis();
  const admin = new Redis({ host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null });
  const results = new Map<string, RunResult[]>();
  try {
    for (let runIndex = 0; runIndex < scale.runs; runIndex++) {
      for (const [name, open] of [
        ['BullMQ', () => openBullmq(redis.port)],
        ['delayq', () => openDelayq(redis.url)],
        ['floor', () => openTasks(redis.url, scale.fireSeconds + 2)],
      ] as const) {
        const r = name === 'floor' ? await runFloor(open, admin, scale) : await runOnce(open, admin, scale);
        console.log(`run ${runIndex + 1} ${name}: ${JSON.stringify(r)}`);
        results.set(name, [...(results.get(name) ?? []), r]);
      }
    }
  } finally {
    admin.disconnect();
    await redis.stop();
    redis.remove();
  }
  const m = (name: string, key: keyof RunResult): number => median((results.get(name) ?? []).map((r) => r[key]));
  const row = (name: string, label: string): (string | number | null)[] => {
    const v = (key: keyof RunResult): number | null => (Number.isNaN(m(name, key)) ? null : m(name, key));
    return [label, v('upsertsPerSec'), v('batchUpsertsPerSec'), v('bytesPerSchedule'), v('fired'), v('p50'), v('p99'), v('burstRate'), v('spreadP50'), v('spreadP99'), v('duplicates')];
  };
  const table: Table = {
    title: `Recurring schedules on one Redis: ${scale.schedules.toLocaleString('en-US')} schedules, median of ${scale.runs}`,
    columns: [
      'system',
      'upserts/s (single calls)',
      'upserts/s (upsertMany)',
      'Redis bytes / schedule',
      `fired (${scale.fireSeconds} s + 2 s)`,
      'aligned p50 ms',
      'aligned p99 ms',
      'burst drain / s',
      'spread p50 ms',
      'spread p99 ms',
      'duplicates',
    ],
    rows: [
      row('BullMQ', 'BullMQ 6.7.0 job schedulers'),
      row('delayq', 'delayq schedules'),
      row('floor', 'delayq plain tasks (floor: no schedule loop)'),
      [
        'delayq / BullMQ',
        m('delayq', 'upsertsPerSec') / m('BullMQ', 'upsertsPerSec'),
        m('delayq', 'batchUpsertsPerSec') / m('BullMQ', 'upsertsPerSec'),
        m('delayq', 'bytesPerSchedule') / m('BullMQ', 'bytesPerSchedule'),
        null, null, null, null, null, null, null,
      ],
    ],
    notes: [
      'Targets (issue 25): upserts >= 5x BullMQ, bytes <= 1/2 of BullMQ, lateness p99 <= 20 ms.',
      'upsertMany: calls of 1,000 definitions, 2 in flight (BullMQ has no batch upsert; its single-call rate is the baseline of both ratios).',
      'floor: the same occurrences as plain tasks created up front, delivered by delayq with no schedule loop: what delivery alone costs on this machine.',
    ],
  };
  printTable(table);
  console.log(`\nresults: ${writeResults('cron', [table], { runs: Object.fromEntries(results) })}`);
}

// ---------------------------------------------------------------------------------------
// --processes N: the spread case over child processes

interface ProcessResult {
  readonly fired: number;
  readonly expected: number;
  readonly duplicates: number;
  readonly p50: number;
  readonly p99: number;
  /** CPU ms per second of the window, per process. */
  readonly cpu: number[];
  /** Schedule swaps per second of the window (tried, won), per process. */
  readonly swaps: [number, number][];
}

async function startChild(
  url: string,
  prefix: string,
  onLate: (id: string, lateness: number) => void,
): Promise<{ child: ChildProcess; cpu: Promise<number>; swaps: () => [number, number]; upserted: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/cron-child.ts', url, prefix], { stdio: ['pipe', 'pipe', 'inherit'] });
  let upsertWaiter: (() => void) | null = null;
  let swaps: [number, number] = [NaN, NaN];
  let readyResolve!: () => void;
  const ready = new Promise<void>((resolve) => (readyResolve = resolve));
  const cpu = new Promise<number>((resolve) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const [tag, a, b] = line.split(' ');
      if (tag === 'L' && a !== undefined) onLate(a, Number(b));
      else if (tag === 'READY') readyResolve();
      else if (tag === 'UPSERTED') upsertWaiter?.();
      else if (tag === 'SWAPS') swaps = [Number(a), Number(b)];
      else if (tag === 'CPU') resolve(Number(a));
    });
  });
  await ready;
  return {
    child,
    cpu,
    swaps: () => swaps,
    upserted: () => new Promise<void>((resolve) => (upsertWaiter = resolve)),
  };
}

async function spreadInProcesses(url: string, admin: Redis, scale: Scale, processes: number, kind: 'schedules' | 'tasks'): Promise<ProcessResult> {
  await admin.flushall();
  const prefix = 'cronbench';
  const seen = new Map<string, number>();
  let windowStart = Infinity;
  let windowEnd = Infinity;
  const lateness: number[] = [];
  let duplicates = 0;
  const onLate = (id: string, late: number): void => {
    const due = Number(id.slice(id.lastIndexOf(':') + 1));
    if (due < windowStart || due >= windowEnd) return;
    const count = seen.get(id) ?? 0;
    seen.set(id, count + 1);
    if (count > 0) duplicates++;
    else lateness.push(late);
  };
  const children = [];
  for (let i = 0; i < processes; i++) children.push(await startChild(url, prefix, onLate));
  await sleep(2_500); // the shards spread over the processes (a lease tick a second)
  const first = Math.ceil(Date.now() / 1_000) * 1_000 + 3_000;
  windowStart = first + 11_000;
  windowEnd = windowStart + scale.fireSeconds * 1_000;
  const upserted = children[0]!.upserted();
  const start = kind === 'schedules' ? first : windowStart;
  children[0]!.child.stdin!.write(`UPSERT ${scale.schedules} ${start} ${kind} ${scale.fireSeconds}\n`);
  await upserted;
  await sleep(Math.max(0, windowStart - Date.now()));
  for (const c of children) c.child.stdin!.write('MARK\n');
  await sleep(Math.max(0, windowEnd - Date.now()) + 1_000);
  const seconds = (Date.now() - windowStart) / 1_000;
  const exits = children.map((c) => new Promise<void>((resolve) => c.child.once('exit', () => resolve())));
  for (const c of children) c.child.stdin!.write('STOP\n');
  const cpu = await Promise.all(children.map((c) => c.cpu));
  await Promise.all(exits);
  lateness.sort((a, b) => a - b);
  return {
    fired: lateness.length,
    expected: scale.schedules * scale.fireSeconds,
    duplicates,
    p50: percentile(lateness, 50),
    p99: percentile(lateness, 99),
    cpu: cpu.map((ms) => ms / seconds),
    swaps: children.map((c) => c.swaps().map((n) => n / seconds) as [number, number]),
  };
}

async function runProcesses(scale: Scale, processes: number): Promise<void> {
  const redis = await startRedis();
  const admin = new Redis({ host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null });
  const cases = [
    ['schedules, 1 process', 1, 'schedules'],
    [`schedules, ${processes} processes`, processes, 'schedules'],
    [`plain tasks (floor), ${processes} processes`, processes, 'tasks'],
  ] as const;
  const results = new Map<string, ProcessResult[]>();
  try {
    for (let runIndex = 0; runIndex < scale.runs; runIndex++)
      for (const [name, n, kind] of cases) {
        const r = await spreadInProcesses(redis.url, admin, scale, n, kind);
        console.log(`run ${runIndex + 1} ${name}: ${JSON.stringify(r)}`);
        results.set(name, [...(results.get(name) ?? []), r]);
      }
  } finally {
    admin.disconnect();
    await redis.stop();
    redis.remove();
  }
  const m = (name: string, f: (r: ProcessResult) => number): number => median((results.get(name) ?? []).map(f));
  const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
  const floorName = cases[2][0];
  const row = (name: string): (string | number | null)[] => [
    name,
    m(name, (r) => r.fired),
    m(name, (r) => r.expected),
    m(name, (r) => r.duplicates),
    m(name, (r) => r.p50),
    m(name, (r) => r.p99),
    m(name, (r) => r.p99) / m(floorName, (r) => r.p99),
    m(name, (r) => mean(r.cpu)),
    m(name, (r) => Math.max(...r.cpu)),
    m(name, (r) => r.cpu.reduce((a, b) => a + b, 0)),
    m(name, (r) => Math.max(...r.swaps.map(([tried]) => tried))),
    m(name, (r) => r.swaps.reduce((sum, [tried]) => sum + tried, 0)),
    m(name, (r) => r.swaps.reduce((sum, [, won]) => sum + won, 0)),
  ];
  const table: Table = {
    title: `Recurring schedules in ${processes} processes on one Redis, spread case: ${scale.schedules.toLocaleString('en-US')} schedules every second, ${scale.fireSeconds} s window, median of ${scale.runs}`,
    columns: ['case', 'fired', 'expected', 'duplicates', 'spread p50 ms', 'spread p99 ms', 'p99 / floor p99', 'CPU ms/s per process (mean)', 'CPU ms/s (busiest process)', 'CPU ms/s (all processes)', 'swaps tried / s (busiest process)', 'swaps tried / s (all)', 'swaps won / s (all)'],
    rows: [...cases.map(([name]) => row(name))],
    notes: [
      'CPU: process.cpuUsage() of each child over the window (user + system), ms per second of wall time.',
      'Swaps: the schedule compare-and-swaps the schedule loops sent (tried) and that moved a schedule (won): the planning work, one per schedule planned.',
      `Planning CPU = schedules minus the floor in the same run: ${processes} processes ${(m(cases[1][0], (r) => r.cpu.reduce((a, b) => a + b, 0)) - m(floorName, (r) => r.cpu.reduce((a, b) => a + b, 0))).toFixed(0)} ms/s in all.`,
    ],
  };
  printTable(table);
  console.log(`\nresults: ${writeResults(`cron-processes-${processes}`, [table], { runs: Object.fromEntries(results) })}`);
}
