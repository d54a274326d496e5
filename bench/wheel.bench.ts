/**
 * npm run bench -- wheel [--timers N] [--due N] [--stress N] [--runs N]
 *
 * Side by side in one process: delayq's timing wheel, one setTimeout per task (Node's own
 * timers), a binary-heap scheduler, and (for the ADR) the seeds' rounds wheel.
 *   a. insert N timers (delays uniform 1 s .. 24 h): inserts/s, heap bytes per timer
 *   b. tasks due within a 2 s window delivered to a no-op handler: lateness, fired/s,
 *      duplicates, losses (delayq through DelayQueue.work on the memory store); the --due
 *      case (200,000) runs --runs times (default 5), schedulers in turn, median run shown
 *   c. keepalive: N pending keys each pushed back by 30 s once: reschedules/s
 *   d. (ADR) cost of letting one simulated minute pass with N timers pending
 */
import { execFileSync } from 'node:child_process';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { TimingWheel } from '../src/core/wheel/timing-wheel.js';
import { DelayQueue } from '../src/open-queue.js';
import { HeapTimer, RoundsWheel } from './baselines.js';
import { percentile, preciseNow, printTable, writeResults, type Table } from './report.js';

const gc = (globalThis as { gc?: () => void }).gc;

function arg(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

function heapUsed(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

function randomDelays(n: number, min: number, max: number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = min + Math.floor(Math.random() * (max - min));
  return out;
}

interface InsertResult {
  name: string;
  insertsPerSec: number;
  bytesPerTimer: number;
}

function measureInsert(name: string, n: number, build: () => { keep: unknown; dispose: () => void }): InsertResult {
  const before = heapUsed();
  const t = performance.now();
  const built = build();
  const seconds = (performance.now() - t) / 1000;
  const after = heapUsed();
  built.dispose();
  return { name, insertsPerSec: n / seconds, bytesPerTimer: (after - before) / n };
}

async function insertBench(n: number): Promise<Table> {
  const tasks = Array.from({ length: n }, (_, i) => ({ id: i }));
  const delays = randomDelays(n, 1_000, 24 * 3600 * 1000);
  const noop = (): void => undefined;
  const contenders: [string, () => { keep: unknown; dispose: () => void }][] = [
    [
      'timing wheel (delayq)',
      () => {
        const start = Date.now();
        const wheel = new TimingWheel<{ id: number }>({ startMs: start });
        for (let i = 0; i < n; i++) wheel.add(start + delays[i]!, tasks[i]!);
        return { keep: wheel, dispose: () => undefined };
      },
    ],
    [
      'setTimeout per task',
      () => {
        const timers = new Array<NodeJS.Timeout>(n);
        for (let i = 0; i < n; i++) {
          const task = tasks[i]!;
          timers[i] = setTimeout(() => noop.call(task), delays[i]);
        }
        return { keep: timers, dispose: () => timers.forEach((tm) => clearTimeout(tm)) };
      },
    ],
    [
      'binary heap',
      () => {
        const start = Date.now();
        const heap = new HeapTimer<{ id: number }>();
        for (let i = 0; i < n; i++) heap.add(start + delays[i]!, tasks[i]!);
        return { keep: heap, dispose: () => undefined };
      },
    ],
    [
      'rounds wheel (seeds, 4096 x 1 ms)',
      () => {
        const start = Date.now();
        const wheel = new RoundsWheel<{ id: number }>(start);
        for (let i = 0; i < n; i++) wheel.add(start + delays[i]!, tasks[i]!);
        return { keep: wheel, dispose: () => undefined };
      },
    ],
  ];
  // Warm-up so that JIT tiers do not decide the ranking.
  for (const [name, build] of contenders) measureInsert(name, Math.min(n, 100_000), build);
  await yieldToLoop();
  const results = contenders.map(([name, build]) => measureInsert(name, n, build));
  const base = results[1]!;
  return {
    title: `a. insert ${n.toLocaleString('en-US')} timers, delays uniform 1 s .. 24 h`,
    columns: ['scheduler', 'inserts/s', 'x setTimeout', 'heap bytes/timer', 'vs setTimeout'],
    rows: results.map((r) => [r.name, r.insertsPerSec, `${(r.insertsPerSec / base.insertsPerSec).toFixed(2)}x`, r.bytesPerTimer, `${((r.bytesPerTimer / base.bytesPerTimer) * 100).toFixed(0)}%`]),
  };
}

interface DeliveryResult {
  name: string;
  count: number;
  fired: number;
  duplicates: number;
  losses: number;
  early: number;
  lateness: Float64Array;
  firedPerSec: number;
}

/** Tracks handler starts: lateness per task, duplicates, and when the last one ran. */
class DeliveryLog {
  readonly seen: Uint8Array;
  readonly lateness: Float64Array;
  fired = 0;
  duplicates = 0;
  early = 0;
  firstAt = Number.POSITIVE_INFINITY;
  lastAt = 0;
  private done: (() => void) | null = null;
  readonly finished: Promise<void>;

  constructor(readonly n: number) {
    this.seen = new Uint8Array(n);
    this.lateness = new Float64Array(n);
    this.finished = new Promise<void>((resolve) => (this.done = resolve));
  }

  record(index: number, runAt: number): void {
    if (index < 0) return; // a warm-up task
    const now = preciseNow();
    if (this.seen[index]) {
      this.duplicates++;
      return;
    }
    this.seen[index] = 1;
    const late = now - runAt;
    if (late < 0) this.early++;
    this.lateness[this.fired++] = late;
    if (now < this.firstAt) this.firstAt = now;
    this.lastAt = now;
    if (this.fired === this.n) this.done?.();
  }

  result(name: string, windowStart: number): DeliveryResult {
    const lateness = this.lateness.slice(0, this.fired).sort();
    return {
      name,
      count: this.n,
      fired: this.fired,
      duplicates: this.duplicates,
      losses: this.n - this.fired,
      early: this.early,
      lateness,
      firedPerSec: this.fired / ((this.lastAt - windowStart) / 1000),
    };
  }
}

async function waitOrTimeout(log: DeliveryLog, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([log.finished, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/**
 * Collects what scheduling left in the young generation, before the window opens. Without
 * it, the first scavenge inside the window copies the last few megabytes of scheduled
 * tasks (some 20 ms here): the cost of the scheduling burst, not of delivery. Every
 * scheduler gets the same call.
 */
function collectSchedulingGarbage(): void {
  gc?.();
}

/**
 * Warm-up, the same for every scheduler: 20,000 tasks due within the 300 ms before the
 * window, on the same scheduler instance and through the same callback as the measured
 * tasks (negative indexes, which the log ignores). The measured window then runs on code
 * V8 has optimised for it, as a long-running service's does. A warm-up on another
 * instance does not carry over: once that instance is collected, V8 throws away the
 * optimised code that had inlined its objects, and the window's first 100-200 ms ran
 * behind while the hot path was compiled again (seen with --trace-opt --trace-deopt).
 * `cold` skips the warm-up: the first burst after a quiet start, reported on its own row.
 */
const WARM_UP = 20_000;

/** A warm-up task's runAt: within the 300 ms that end 100 ms before the window. */
function warmUpAt(windowStart: number): number {
  return windowStart - 400 + Math.floor(Math.random() * 300);
}

/** Schedules `count` tasks made by `make(j)`, in scheduleMany batches of 10,000. */
async function scheduleInBatches(q: DelayQueue, count: number, make: (j: number) => { topic: string; payload: number; runAt: number }): Promise<void> {
  const batch = 10_000;
  for (let i = 0; i < count; i += batch) {
    const tasks = [];
    for (let j = i; j < Math.min(count, i + batch); j++) tasks.push(make(j));
    await q.scheduleMany(tasks);
  }
}

async function deliverDelayq(n: number, lead: number, windowMs = 2_000, cold = false): Promise<DeliveryResult> {
  const q = await DelayQueue.open({ store: 'memory' });
  const log = new DeliveryLog(n);
  q.work<number>('bench', (d) => log.record(d.payload, d.runAt), { concurrency: 1_000 });
  const windowStart = Date.now() + lead;
  await scheduleInBatches(q, n, (j) => ({ topic: 'bench', payload: j, runAt: windowStart + Math.floor(Math.random() * windowMs) }));
  await scheduleInBatches(q, cold ? 0 : WARM_UP, (j) => ({ topic: 'bench', payload: -1 - j, runAt: warmUpAt(windowStart) }));
  const scheduledBy = Date.now();
  collectSchedulingGarbage();
  await waitOrTimeout(log, lead + 30_000);
  await q.close();
  const result = log.result(cold ? 'delayq, cold (no warm-up)' : 'delayq (wheel + DelayQueue.work)', windowStart);
  if (scheduledBy > windowStart - 400) console.warn(`delayq: scheduling ran ${scheduledBy - windowStart + 400} ms into the warm-up`);
  return result;
}

async function deliverSetTimeout(n: number, lead: number, windowMs = 2_000): Promise<DeliveryResult> {
  const log = new DeliveryLog(n);
  const windowStart = Date.now() + lead;
  const arm = (i: number, runAt: number): void => {
    setTimeout(() => log.record(i, runAt), runAt - Date.now());
  };
  for (let i = 0; i < n; i++) arm(i, windowStart + Math.floor(Math.random() * windowMs));
  for (let i = 0; i < WARM_UP; i++) arm(-1 - i, warmUpAt(windowStart));
  collectSchedulingGarbage();
  await waitOrTimeout(log, lead + 30_000);
  return log.result('setTimeout per task', windowStart);
}

async function deliverHeap(n: number, lead: number, windowMs = 2_000): Promise<DeliveryResult> {
  const log = new DeliveryLog(n);
  const heap = new HeapTimer<{ i: number; runAt: number }>();
  const windowStart = Date.now() + lead;
  for (let i = 0; i < n; i++) {
    const runAt = windowStart + Math.floor(Math.random() * windowMs);
    heap.add(runAt, { i, runAt });
  }
  for (let i = 0; i < WARM_UP; i++) {
    const runAt = warmUpAt(windowStart);
    heap.add(runAt, { i: -1 - i, runAt });
  }
  collectSchedulingGarbage();
  let timer: NodeJS.Timeout | undefined;
  const due: { i: number; runAt: number }[] = [];
  const drive = (): void => {
    due.length = 0;
    heap.popDue(Date.now(), due);
    for (const t of due) log.record(t.i, t.runAt);
    const next = heap.peekAt();
    if (next !== undefined) timer = setTimeout(drive, Math.max(0, next - Date.now()));
  };
  drive();
  await waitOrTimeout(log, lead + 30_000);
  clearTimeout(timer);
  return log.result('binary heap + one timer', windowStart);
}

/** The run with the median p99 (of an odd count; the upper middle one otherwise). */
function medianRun(runs: DeliverySummary[]): DeliverySummary {
  const sorted = [...runs].sort((a, b) => a.p99 - b.p99);
  const middle = sorted[Math.floor(sorted.length / 2)]!;
  // Duplicates, losses and early starts are summed over every run: none may hide in another.
  return {
    ...middle,
    duplicates: runs.reduce((sum, r) => sum + r.duplicates, 0),
    losses: runs.reduce((sum, r) => sum + r.losses, 0),
    early: runs.reduce((sum, r) => sum + r.early, 0),
  };
}

function deliveryTable(n: number, results: DeliverySummary[], allRuns?: DeliverySummary[][]): Table {
  const eachP99 = (name: string): string =>
    allRuns
      ?.find((runs) => runs[0]?.name === name)
      ?.map((r) => r.p99.toFixed(1))
      .join(' / ') ?? 'one run';
  return {
    title: `b. ${n.toLocaleString('en-US')} tasks due within a 2 s window, no-op handler (lateness = handler start - runAt, ms)${allRuns ? `; median of ${allRuns[0]?.length ?? 0} runs by p99` : ''}`,
    columns: ['scheduler', 'p50', 'p99', 'p99.9', 'max', 'fired/s', 'duplicates', 'losses', 'early', ...(allRuns ? ['p99 of each run'] : [])],
    rows: results.map((r) => [r.name, r.p50, r.p99, r.p999, r.max, r.firedPerSec, r.duplicates, r.losses, r.early, ...(allRuns ? [eachP99(r.name)] : [])]),
    notes: [
      'Each scheduler runs in a fresh process. Its warm-up, 20,000 tasks due within the 300 ms before the window, is scheduled with the measured tasks and runs on the same instance and callback; what scheduling left on the heap is collected before the window. The cold row skips the warm-up (one run, outside the medians): the first burst after a quiet start, while V8 is still compiling the hot path. "early" counts handler starts before runAt by the wall clock.',
    ],
  };
}

async function rescheduleBench(n: number): Promise<Table> {
  const rows: [string, number][] = [];
  {
    const start = Date.now();
    const wheel = new TimingWheel<number>({ startMs: start });
    const handles = Array.from({ length: n }, (_, i) => wheel.add(start + 30_000 + (i % 1_000), i)!);
    const t = performance.now();
    for (let i = 0; i < n; i++) {
      wheel.cancel(handles[i]!);
      handles[i] = wheel.add(start + 60_000 + (i % 1_000), i)!;
    }
    rows.push(['timing wheel (delayq): cancel + add', n / ((performance.now() - t) / 1000)]);
  }
  {
    const timers = Array.from({ length: n }, () => setTimeout(() => undefined, 30_000));
    const t = performance.now();
    for (let i = 0; i < n; i++) timers[i]!.refresh();
    rows.push(['setTimeout: timeout.refresh()', n / ((performance.now() - t) / 1000)]);
    for (const tm of timers) clearTimeout(tm);
  }
  {
    const start = Date.now();
    const heap = new HeapTimer<number>();
    const nodes = Array.from({ length: n }, (_, i) => heap.add(start + 30_000 + Math.random() * 1_000, i));
    const t = performance.now();
    for (let i = 0; i < n; i++) {
      heap.remove(nodes[i]!);
      nodes[i] = heap.add(start + 60_000 + Math.random() * 1_000, i);
    }
    rows.push(['binary heap: remove + add', n / ((performance.now() - t) / 1000)]);
  }
  {
    const q = await DelayQueue.open({ store: 'memory' });
    const ids: string[] = [];
    for (let i = 0; i < n; i += 10_000) {
      const batch = Array.from({ length: Math.min(10_000, n - i) }, (_, j) => ({ topic: 'keepalive', id: `conn-${i + j}`, delayMs: 30_000 }));
      ids.push(...(await q.scheduleMany(batch)).map((r) => r.id));
    }
    const t = performance.now();
    for (let i = 0; i < n; i += 10_000) {
      await Promise.all(ids.slice(i, i + 10_000).map((id) => q.reschedule(id, { delayMs: 30_000 })));
    }
    rows.push(['DelayQueue.reschedule (memory store, full API path)', n / ((performance.now() - t) / 1000)]);
    await q.close();
  }
  return {
    title: `c. keepalive: ${n.toLocaleString('en-US')} pending keys, each pushed back by 30 s once`,
    columns: ['scheduler', 'reschedules/s'],
    rows,
  };
}

function idleCostBench(n: number): Table {
  const delays = randomDelays(n, 1_000, 24 * 3600 * 1000);
  const minute = 60_000;
  const start = 0;
  const hier = new TimingWheel<number>({ startMs: start });
  for (let i = 0; i < n; i++) hier.add(start + delays[i]!, i);
  let t = performance.now();
  let wakeups = 0;
  let fired = 0;
  for (let d = hier.nextDeadline(); d !== undefined && d <= start + minute; d = hier.nextDeadline()) {
    fired += hier.advance(d).length;
    wakeups++;
  }
  const hierMs = performance.now() - t;

  const rounds = new RoundsWheel<number>(start);
  for (let i = 0; i < n; i++) rounds.add(start + delays[i]!, i);
  const out: number[] = [];
  t = performance.now();
  for (let tick = 0; tick < minute; tick++) rounds.step(out);
  const roundsMs = performance.now() - t;
  return {
    title: `d. (ADR 0001) one simulated minute with ${n.toLocaleString('en-US')} timers pending (1 ms tick)`,
    columns: ['wheel', 'driver wake-ups', 'entries touched', 'fired', 'CPU ms'],
    rows: [
      ['hierarchical, 64 slots/level (delayq)', wakeups, null, fired, hierMs],
      ['rounds / cycle_num, 4096 slots (seeds)', minute, rounds.touched, out.length, roundsMs],
    ],
    notes: ['The rounds wheel must wake on every tick and touches every entry once per revolution; the hierarchical wheel wakes only for non-empty buckets.'],
  };
}

/** Each delivery scenario runs in a fresh process, so one's heap and JIT state do not tax another. */
interface DeliverySummary {
  name: string;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  firedPerSec: number;
  duplicates: number;
  losses: number;
  early: number;
}

function deliverInChild(scenario: string, n: number, lead: number): DeliverySummary {
  const out = execFileSync(process.execPath, ['--expose-gc', '--max-old-space-size=8192', '--import', 'tsx', import.meta.filename, scenario, String(n), String(lead)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 256 * 1024 * 1024,
  });
  return JSON.parse(out.trim().split('\n').pop()!) as DeliverySummary;
}

const SCENARIOS: Record<string, (n: number, lead: number, windowMs?: number) => Promise<DeliveryResult>> = {
  delayq: deliverDelayq,
  setTimeout: deliverSetTimeout,
  heap: deliverHeap,
};
/** Reported beside the target case, once, outside its medians. */
const COLD_SCENARIO = 'delayq-cold';
const EXTRA_SCENARIOS: typeof SCENARIOS = {
  [COLD_SCENARIO]: (n, lead, windowMs) => deliverDelayq(n, lead, windowMs, true),
};

export async function run(args: string[]): Promise<void> {
  if (!gc) console.warn('run with --expose-gc (npm run bench does) for heap figures');
  const timers = arg(args, 'timers', 1_000_000);
  const due = arg(args, 'due', 200_000);
  const stress = arg(args, 'stress', 1_000_000);
  const dueRuns = arg(args, 'runs', 5);
  const tables: Table[] = [];

  const insert = await insertBench(timers);
  printTable(insert);
  tables.push(insert);

  for (const n of [due, stress]) {
    // Scheduling ends well before the window, so its garbage is not collected inside it.
    const lead = n > 300_000 ? 10_000 : 4_000;
    // The target case runs several times, the schedulers taking turns, so a stall of the
    // machine lands on one run, not on one scheduler; the table gives each one's median run.
    const rounds = n === due ? dueRuns : 1;
    const runs = new Map<string, DeliverySummary[]>(Object.keys(SCENARIOS).map((scenario) => [scenario, []]));
    for (let round = 0; round < rounds; round++) {
      for (const [scenario, list] of runs) list.push(deliverInChild(scenario, n, lead));
    }
    const results = [...runs.values()].map(medianRun);
    if (n === due) results.push(deliverInChild(COLD_SCENARIO, n, lead));
    const table = deliveryTable(n, results, rounds > 1 ? [...runs.values()] : undefined);
    printTable(table);
    tables.push(table);
  }

  const keepalive = await rescheduleBench(timers);
  printTable(keepalive);
  tables.push(keepalive);

  const idle = idleCostBench(timers);
  printTable(idle);
  tables.push(idle);

  const file = writeResults('wheel', tables, { args: { timers, due, stress, runs: dueRuns } });
  console.log(`\nwrote ${file}`);
}

// Child mode: `tsx bench/wheel.bench.ts <scenario> <n> <lead>` prints one JSON summary line.
if (process.argv[1] === import.meta.filename && process.argv[2] !== undefined) {
  const scenario = SCENARIOS[process.argv[2]] ?? EXTRA_SCENARIOS[process.argv[2]];
  if (!scenario) throw new Error(`unknown scenario ${process.argv[2]}`);
  // The warm-up is part of each scenario (see WARM_UP): same instance, just before the window.
  const r = await scenario(Number(process.argv[3]), Number(process.argv[4]));
  const summary: DeliverySummary = {
    name: r.name,
    p50: percentile(r.lateness, 50),
    p99: percentile(r.lateness, 99),
    p999: percentile(r.lateness, 99.9),
    max: r.lateness[r.lateness.length - 1] ?? Number.NaN,
    firedPerSec: r.firedPerSec,
    duplicates: r.duplicates,
    losses: r.losses,
    early: r.early,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}
