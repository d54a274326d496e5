/**
 * npm run bench -- flow [--runs N] [--seconds S] [--purge N] [--only a,b,c]
 *
 * Topic flow limits (issue 36, ADR 0042) on a throwaway redis-server (no persistence) that
 * this benchmark starts on a free port; each case's run on a fresh key prefix. Each case
 * runs --runs times (default 3) and reports the median of each figure.
 *
 *   A  one topic limited to 500/s (burst 100), three consumer processes (flow-child.ts) on
 *      a backlog due, held --seconds (default 30): the delivered rate, and the most
 *      deliveries in any 1 s window (fixed and sliding) against burst + rate
 *   B  S3 of the Redis benchmark (5,000 tasks/s due 2 s later, one process, concurrency 50)
 *      for --seconds (default 20, at most 20) on an unlimited topic: its lateness p99 alone, and with 100 other
 *      topics limited to 2/s each with a backlog and a worker each, 20 of them paused
 *   C  --purge pending tasks (default 1,000,000) of one topic purged with q.topics.purge:
 *      tasks/s, and the lateness p99 of another topic delivering ~1,000/s while the purge
 *      runs against the same topic over as long without a purge (before it)
 *
 * Lateness = when the handler started - the task's due time. Prints a table and writes
 * bench/results/flow-latest.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { DelayQueue } from '../src/open-queue.js';
import { cli, startRedis, type RedisServer } from '../test/helpers/redis-servers.js';
import { percentile, preciseNow, printTable, writeResults, type Table } from './report.js';
import { s3PacedLateness } from './s3-paced.js';

const PAYLOAD = { p: 'x'.repeat(64 - '{"p":""}'.length) };
const A_RATE = 500;
const A_BURST = 100;

let prefixes = 0;
const nextPrefix = (name: string): string => `flow${name}${prefixes++}`;

function log(message: string): void {
  console.log(`  [${new Date().toISOString().slice(11, 19)}] ${message}`);
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor((sorted.length - 1) / 2)]!;
};

async function schedule(queue: DelayQueue, topic: string, count: number, runAt: (i: number) => number): Promise<void> {
  for (let from = 0; from < count; from += 1_000) {
    const n = Math.min(1_000, count - from);
    await queue.scheduleMany(Array.from({ length: n }, (_, j) => ({ topic, payload: PAYLOAD, runAt: runAt(from + j) })));
  }
}

// ---------------------------------------------------------------------------------------
// A: a limit of 500/s held across three processes

interface CaseA {
  readonly rate: number;
  readonly maxWindow: number;
  readonly maxSliding: number;
  readonly minWindow: number;
}

async function caseA(redis: RedisServer, seconds: number): Promise<CaseA> {
  const prefix = nextPrefix('a');
  const topic = 'limited';
  const queue = await DelayQueue.open({ store: redis.url, storeOptions: { prefix } });
  await queue.topics.setLimits(topic, { rate: A_RATE, burst: A_BURST });
  // A backlog due now that outlasts the run: the limit, not the supply, sets the pace.
  await schedule(queue, topic, Math.ceil(A_RATE * (seconds + 5) * 1.1), () => Date.now());
  const got: number[] = [];
  const children: ChildProcess[] = [];
  const ready: Promise<void>[] = [];
  for (let n = 0; n < 3; n++) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/flow-child.ts', redis.url, prefix, topic], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    ready.push(
      new Promise<void>((resolve) =>
        createInterface({ input: child.stdout }).on('line', (line) => {
          if (line === 'READY') return resolve();
          if (line.startsWith('G ')) got.push(Number(line.slice(2)));
        }),
      ),
    );
  }
  await Promise.all(ready);
  for (const child of children) child.kill('SIGUSR2');
  await sleep(seconds * 1_000 + 1_500);
  await Promise.all(children.map((child) => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGTERM')))));
  await queue.close();
  got.sort((a, b) => a - b);
  // The held span: `seconds` from the first delivery; the first window (bucket full, every process starting) included.
  const start = got[0] ?? 0;
  const held = got.filter((t) => t < start + seconds * 1_000);
  const windows = Array.from({ length: seconds }, () => 0);
  for (const t of held) windows[Math.floor((t - start) / 1_000)]!++;
  let maxSliding = 0;
  for (let i = 0, j = 0; i < held.length; i++) {
    while (held[i]! - held[j]! >= 1_000) j++;
    maxSliding = Math.max(maxSliding, i - j + 1);
  }
  return { rate: held.length / seconds, maxWindow: Math.max(...windows), maxSliding, minWindow: Math.min(...windows) };
}

// ---------------------------------------------------------------------------------------
// B: S3's lateness beside 100 limited topics

const LIMITED_TOPICS = 100;
const PAUSED_TOPICS = 20;

const s3 = s3PacedLateness;

interface CaseB {
  readonly alone: number;
  readonly beside: number;
  readonly ratio: number;
  readonly losses: number;
}

async function caseB(redis: RedisServer, seconds: number): Promise<CaseB> {
  const alone = await DelayQueue.open({ store: redis.url, storeOptions: { prefix: nextPrefix('b') } });
  await s3(alone, 2); // warm the delivery path
  const a = await s3(alone, seconds);
  await alone.close();
  log(`B alone: p50 ${a.p50.toFixed(1)} ms, p99 ${a.p99.toFixed(1)} ms`);

  const beside = await DelayQueue.open({ store: redis.url, storeOptions: { prefix: nextPrefix('b') } });
  const workers = [];
  // At once: on a shared store each setLimits and pause returns once every process holds it (2 x pauseSyncMs, ADR 0052).
  await Promise.all(
    Array.from({ length: LIMITED_TOPICS }, async (_, n) => {
      const topic = `limited-${n}`;
      await beside.topics.setLimits(topic, { rate: 2, burst: 2, concurrency: 5 });
      if (n < PAUSED_TOPICS) await beside.topics.pause(topic);
      await schedule(beside, topic, 200, () => Date.now());
    }),
  );
  for (let n = 0; n < LIMITED_TOPICS; n++) workers.push(beside.work(`limited-${n}`, () => undefined, { concurrency: 2 }));
  await s3(beside, 2);
  const b = await s3(beside, seconds);
  log(`B beside ${LIMITED_TOPICS} limited topics: p50 ${b.p50.toFixed(1)} ms, p99 ${b.p99.toFixed(1)} ms; throttled ${Object.values((await beside.stats()).throttled).reduce((x, y) => x + y, 0)}`);
  await Promise.all(workers.map((w) => w.close()));
  await beside.close();
  return { alone: a.p99, beside: b.p99, ratio: b.p99 / a.p99, losses: a.losses + b.losses };
}

// ---------------------------------------------------------------------------------------
// C: purging a large pending topic

interface CaseC {
  readonly purged: number;
  readonly purgePerSec: number;
  readonly purgeSeconds: number;
  readonly p99Without: number;
  readonly p99During: number;
}

/** ~1,000 tasks/s due 1 s after scheduling on `topic` until `until()` says stop; their lateness. */
async function steadyTopic(queue: DelayQueue, topic: string, until: () => boolean): Promise<number[]> {
  const lateness: number[] = [];
  const worker = queue.work(topic, (d) => void lateness.push(preciseNow() - d.runAt), { concurrency: 50 });
  let scheduled = 0;
  const started = Date.now();
  for (let t = 0; !until(); t++) {
    await queue.scheduleMany(Array.from({ length: 10 }, () => ({ topic, payload: PAYLOAD, runAt: Date.now() + 1_000 })));
    scheduled += 10;
    await sleep(Math.max(0, started + (t + 1) * 10 - Date.now()));
  }
  const deadline = Date.now() + 15_000;
  while (lateness.length < scheduled && Date.now() < deadline) await sleep(50);
  await worker.close();
  return lateness.sort((a, b) => a - b);
}

async function caseC(redis: RedisServer, count: number): Promise<CaseC> {
  const queue = await DelayQueue.open({ store: redis.url, storeOptions: { prefix: nextPrefix('c') } });
  const later = Date.now() + 3_600_000;
  const loaded = Date.now();
  await schedule(queue, 'purged', count, () => later);
  log(`C: ${count.toLocaleString('en-US')} pending scheduled in ${((Date.now() - loaded) / 1000).toFixed(1)} s`);
  await steadyTopic(queue, 'steady', ((end) => () => Date.now() > end)(Date.now() + 2_000)); // warm
  let purgeDone = false;
  const purgeStarted = Date.now();
  const during = steadyTopic(queue, 'steady', () => purgeDone);
  const purged = await queue.topics.purge('purged', { state: 'pending' });
  purgeDone = true;
  const purgeMs = Date.now() - purgeStarted;
  const duringLateness = await during;
  // As long again, with nothing purged: the same topic's lateness without the purge.
  const without = await steadyTopic(queue, 'steady', ((end) => () => Date.now() > end)(Date.now() + Math.max(3_000, purgeMs)));
  await queue.close();
  return {
    purged,
    purgePerSec: (purged / purgeMs) * 1_000,
    purgeSeconds: purgeMs / 1_000,
    p99Without: percentile(without, 99),
    p99During: percentile(duringLateness, 99),
  };
}

// ---------------------------------------------------------------------------------------

export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { runs: { type: 'string', default: '3' }, seconds: { type: 'string' }, purge: { type: 'string', default: '1000000' }, only: { type: 'string', default: 'a,b,c' } },
  });
  const runs = Number(values.runs);
  const seconds = values.seconds === undefined ? null : Number(values.seconds);
  const purgeCount = Number(values.purge);
  const only = new Set(values.only.split(','));
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs wants a whole number >= 1, got ${values.runs}`);
  if (seconds !== null && (!Number.isInteger(seconds) || seconds < 2)) throw new Error(`--seconds wants a whole number >= 2, got ${values.seconds}`);
  if (!Number.isInteger(purgeCount) || purgeCount < 1_000) throw new Error(`--purge wants a whole number >= 1000, got ${values.purge}`);
  const aSeconds = seconds ?? 30;
  const bSeconds = Math.min(seconds ?? 20, 20);

  const redis = await startRedis({});
  const version = /redis_version:(\S+)/.exec(cli(redis.port, 'INFO', 'server'))?.[1] ?? '?';
  const as: CaseA[] = [];
  const bs: CaseB[] = [];
  const cs: CaseC[] = [];
  try {
    for (let r = 1; r <= runs; r++) {
      if (only.has('a')) {
        log(`run ${r}/${runs}: A, ${A_RATE}/s for ${aSeconds} s over 3 processes`);
        as.push(await caseA(redis, aSeconds));
        log(`A: ${JSON.stringify(as.at(-1))}`);
      }
      if (only.has('b')) {
        log(`run ${r}/${runs}: B, S3 5,000/s for ${bSeconds} s alone and beside ${LIMITED_TOPICS} limited topics`);
        bs.push(await caseB(redis, bSeconds));
      }
      if (only.has('c')) {
        log(`run ${r}/${runs}: C, purge ${purgeCount.toLocaleString('en-US')} pending`);
        cs.push(await caseC(redis, purgeCount));
        log(`C: ${JSON.stringify(cs.at(-1))}`);
      }
      cli(redis.port, 'FLUSHALL');
    }
  } finally {
    await redis.stop();
    redis.remove();
  }

  const m = <T>(list: readonly T[], f: (x: T) => number): number => median(list.map(f));
  const pct = (x: number): string => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
  const rows: (string | number)[][] = [];
  if (as.length > 0) {
    const rate = m(as, (a) => a.rate);
    rows.push(
      [`A ${A_RATE}/s (burst ${A_BURST}), 3 processes, ${aSeconds} s: delivered/s`, rate.toFixed(1), `${pct(rate / A_RATE - 1)} of ${A_RATE}/s (target within ±5%)`],
      ['A most in a 1 s window: fixed / sliding', `${m(as, (a) => a.maxWindow)} / ${m(as, (a) => a.maxSliding)}`, `burst + rate = ${A_BURST + A_RATE}; least in a fixed window ${m(as, (a) => a.minWindow)}`],
    );
  }
  if (bs.length > 0) {
    const ratio = m(bs, (b) => b.ratio);
    rows.push(
      [`B S3 5,000/s, ${bSeconds} s: lateness p99 alone / beside ${LIMITED_TOPICS} limited (${PAUSED_TOPICS} paused), ms`, `${m(bs, (b) => b.alone).toFixed(1)} / ${m(bs, (b) => b.beside).toFixed(1)}`, `ratio ${ratio.toFixed(2)} (target <= 1.10); losses ${bs.reduce((n, b) => n + b.losses, 0)}`],
    );
  }
  if (cs.length > 0) {
    rows.push(
      [`C purge ${purgeCount.toLocaleString('en-US')} pending (Redis): tasks/s`, Math.round(m(cs, (c) => c.purgePerSec)), `${m(cs, (c) => c.purgeSeconds).toFixed(1)} s`],
      ['C another topic at ~1,000/s: lateness p99 without / during the purge, ms', `${m(cs, (c) => c.p99Without).toFixed(1)} / ${m(cs, (c) => c.p99During).toFixed(1)}`, ''],
    );
  }
  const table: Table = {
    title: `flow limits (Redis ${version}), median of ${runs} run(s)`,
    columns: ['case', 'result', 'against'],
    rows,
    notes: ['Lateness = handler start - due time. A: windows from the first delivery, the first included (bucket full, processes starting).'],
  };
  printTable(table);
  const file = writeResults('flow', [table], { runs: { a: as, b: bs, c: cs }, args: argv });
  console.log(`\nwritten to ${file}`);
}
