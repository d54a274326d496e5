/**
 * npm run bench -- priority [--runs N] [--seconds S] [--tasks N] [--base DIR] [--only a,b]
 *
 * Task priorities (issue 49, ADR 0057), on a throwaway redis-server this benchmark starts.
 *
 *   A  S3 (5,000 tasks/s due 2 s later, one process, concurrency 50, --seconds each, default
 *      10) on a topic without priorities: its lateness p99 in this build, and with --base (a
 *      checkout of delayq without priorities, its node_modules in place) in that one, the
 *      runs alternating (priority-s3-child.ts, one process per run): topics without
 *      priorities must pay nothing, so this build's p99 stays within the spread of the base's.
 *   B  a backlog of --tasks (default 100,000) due together on a paused topic, resumed under
 *      one worker of concurrency 50: all of priority 0, then mixed (10% at 10, 10% at -10,
 *      the rest 0, in shuffled order); seconds to drain, and the deliveries out of priority
 *      order (a delivery of a lower priority than one delivered after it). Memory and Redis.
 *
 * Prints a table and writes bench/results/priority-latest.json.
 */
import { spawn } from 'node:child_process';
import { existsSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { DelayQueue } from '../src/open-queue.js';
import { startRedis, type RedisServer } from '../test/helpers/redis-servers.js';
import { printTable, writeResults, type Table } from './report.js';

let prefixes = 0;
const nextPrefix = (name: string): string => `prio${name}${prefixes++}`;
const log = (message: string): void => console.log(`  [${new Date().toISOString().slice(11, 19)}] ${message}`);
const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

interface S3 {
  readonly p50: number;
  readonly p99: number;
  readonly losses: number;
}

/** One S3 run by the child of `root` (this checkout, or --base). */
function s3In(root: string, redis: RedisServer, seconds: number): Promise<S3> {
  const child = join(root, 'bench', 'priority-s3-child.ts');
  // The child and the load it runs, copied into a checkout that has not got them.
  for (const file of ['priority-s3-child.ts', 's3-paced.ts']) if (!existsSync(join(root, 'bench', file))) copyFileSync(join(import.meta.dirname, file), join(root, 'bench', file));
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', child, redis.url, nextPrefix('s'), String(seconds)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as S3) : reject(new Error(`s3 child exited ${code}`))));
  });
}

interface Drain {
  readonly seconds: number;
  readonly inversions: number;
}

const PRIORITY_OF = (i: number): number => (i % 10 === 0 ? 10 : i % 10 === 5 ? -10 : 0);

/** `tasks` due together on a paused topic of `store`, resumed under one worker: how long to drain, and how many deliveries came before one of a higher priority. */
async function drain(store: string, tasks: number, mixed: boolean): Promise<Drain> {
  const queue = await DelayQueue.open({ store, pauseSyncMs: 100 });
  try {
    await queue.topics.pause('backlog');
    const order = Array.from({ length: tasks }, (_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    const runAt = Date.now();
    for (let at = 0; at < tasks; at += 1_000) {
      await queue.scheduleMany(order.slice(at, at + 1_000).map((i) => (mixed && PRIORITY_OF(i) !== 0 ? { id: `t${i}`, topic: 'backlog', payload: { i }, runAt, priority: PRIORITY_OF(i) } : { id: `t${i}`, topic: 'backlog', payload: { i }, runAt })));
    }
    await sleep(1_500); // every task due and made ready
    const seen: number[] = [];
    const started = performance.now();
    const worker = queue.work('backlog', (d) => void seen.push(PRIORITY_OF((d.payload as { i: number }).i)), { concurrency: 50 });
    await queue.topics.resume('backlog');
    const deadline = Date.now() + 300_000;
    while (seen.length < tasks && Date.now() < deadline) await sleep(20);
    const seconds = (performance.now() - started) / 1000;
    await worker.close();
    // A delivery is out of order when a later one has a higher priority (counted once each).
    let inversions = 0;
    let highestAfter = -Infinity;
    if (mixed) for (let k = seen.length - 1; k >= 0; k--) {
      if (seen[k]! < highestAfter) inversions++;
      highestAfter = Math.max(highestAfter, seen[k]!);
    }
    return { seconds, inversions };
  } finally {
    await queue.close();
  }
}

export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { runs: { type: 'string', default: '3' }, seconds: { type: 'string', default: '10' }, tasks: { type: 'string', default: '100000' }, base: { type: 'string' }, only: { type: 'string', default: 'a,b' } },
  });
  const runs = Number(values.runs);
  const seconds = Math.min(20, Number(values.seconds));
  const tasks = Number(values.tasks);
  const only = new Set(values.only.split(','));
  const redis = await startRedis();
  const rows: (string | number)[][] = [];
  const results: Record<string, unknown> = {};
  try {
    if (only.has('a')) {
      const mine: S3[] = [];
      const base: S3[] = [];
      for (let r = 1; r <= runs; r++) {
        if (values.base !== undefined) {
          base.push(await s3In(values.base, redis, seconds));
          log(`A run ${r}/${runs} base: p99 ${base.at(-1)!.p99.toFixed(1)} ms`);
        }
        mine.push(await s3In(join(import.meta.dirname, '..'), redis, seconds));
        log(`A run ${r}/${runs} this build: p99 ${mine.at(-1)!.p99.toFixed(1)} ms`);
      }
      const spread = (xs: S3[]): string => `${Math.min(...xs.map((x) => x.p99)).toFixed(1)}..${Math.max(...xs.map((x) => x.p99)).toFixed(1)}`;
      rows.push([`A S3 5,000/s ${seconds} s (Redis), topic without priorities: lateness p99, ms (median; spread)`, `${median(mine.map((x) => x.p99)).toFixed(1)} (${spread(mine)})`, base.length > 0 ? `base ${median(base.map((x) => x.p99)).toFixed(1)} (${spread(base)})` : 'no --base']);
      rows.push(['A losses', mine.reduce((n, x) => n + x.losses, 0) + base.reduce((n, x) => n + x.losses, 0), '']);
      results['a'] = { mine, base };
    }
    if (only.has('b')) {
      for (const [name, store] of [['memory', 'memory'], ['Redis', `${redis.url}?prefix=${nextPrefix('b')}`]] as const) {
        const plain = await drain(name === 'memory' ? store : `${redis.url}?prefix=${nextPrefix('b')}`, tasks, false);
        log(`B ${name} plain: ${plain.seconds.toFixed(1)} s`);
        const mixed = await drain(name === 'memory' ? store : `${redis.url}?prefix=${nextPrefix('b')}`, tasks, true);
        log(`B ${name} mixed: ${mixed.seconds.toFixed(1)} s, ${mixed.inversions} out of order`);
        rows.push([`B drain ${tasks.toLocaleString('en-US')} due (${name}): tasks/s all priority 0 / mixed`, `${Math.round(tasks / plain.seconds)} / ${Math.round(tasks / mixed.seconds)}`, `out of priority order (mixed): ${mixed.inversions}`]);
        results[`b-${name}`] = { plain, mixed };
      }
    }
  } finally {
    await redis.stop();
    redis.remove();
  }
  const table: Table = { title: `priorities, ${runs} run(s) of A`, columns: ['case', 'result', 'against'], rows, notes: ['Lateness = handler start - due time. B: one worker of concurrency 50 in the process that scheduled.'] };
  printTable(table);
  console.log(`\nwritten to ${writeResults('priority', [table], { results, args: argv })}`);
}
