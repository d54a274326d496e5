/**
 * npm run bench -- delivery-cost [--runs N] [--tasks N] [--base DIR]
 *
 * What one delivery costs on Redis, where S2's lateness comes from once a burst saturates
 * the two cores (its p99 then measures the backlog, not the code): `--tasks` (default
 * 100,000) due at one instant, drained by one worker of concurrency 50, in a child process
 * per run (delivery-cost-child.ts) on a throwaway redis-server. Per delivery: the child's
 * CPU, the server's CPU and each script's time; and the deliveries per second.
 *
 * With --base (another checkout, its node_modules in place) the runs alternate between it
 * and this one (--runs each, default 3) and the table gives both medians and their ratio:
 * the host's speed swings 2-3x between hours, so only a comparison within one run holds.
 *
 * Prints a table and writes bench/results/delivery-cost-latest.json.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cli, startRedis, type RedisServer } from '../test/helpers/redis-servers.js';
import { printTable, writeResults, type Table } from './report.js';

interface Cost {
  readonly firedPerSec: number;
  readonly nodeUs: number;
  readonly redisUs: number;
  readonly scriptsUs: Record<string, number>;
  readonly scriptCalls: Record<string, number>;
}

const CHILD = 'delivery-cost-child.ts';
let prefixes = 0;
const log = (message: string): void => console.log(`  [${new Date().toISOString().slice(11, 19)}] ${message}`);
const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/** One run by the child of `root` (this checkout, or --base). */
function runIn(root: string, redis: RedisServer, tasks: number): Promise<Cost> {
  if (!existsSync(join(root, 'bench', CHILD))) copyFileSync(join(import.meta.dirname, CHILD), join(root, 'bench', CHILD));
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', join(root, 'bench', CHILD), redis.url, `cost${prefixes++}`, String(tasks)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Cost) : reject(new Error(`${root}: child exited ${code}`))));
  });
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { runs: { type: 'string', default: '3' }, tasks: { type: 'string', default: '100000' }, base: { type: 'string' } } });
  const runs = Number(values.runs);
  const tasks = Number(values.tasks);
  const here = join(import.meta.dirname, '..');
  const sides = values.base === undefined ? [{ name: 'this build', root: here }] : [{ name: 'this build', root: here }, { name: 'base', root: values.base }];
  const results = new Map<string, Cost[]>(sides.map((s) => [s.name, []]));
  const redis = await startRedis();
  try {
    for (let i = 0; i < runs; i++) {
      // Alternating, and which side goes first alternates too.
      for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
        const cost = await runIn(side.root, redis, tasks);
        log(`${side.name} run ${i + 1}: ${Math.round(cost.firedPerSec)}/s, node ${cost.nodeUs.toFixed(1)} us, redis ${cost.redisUs.toFixed(1)} us a delivery`);
        results.get(side.name)!.push(cost);
        // Each run on an empty server: the last run's completed tasks would weigh on the next.
        cli(redis.port, 'FLUSHALL');
      }
    }
  } finally {
    await redis.stop();
    redis.remove();
  }
  const names = [...new Set(sides.flatMap((s) => results.get(s.name)!.flatMap((c) => Object.keys(c.scriptsUs))))].sort();
  const metric = (label: string, of: (c: Cost) => number, digits: number): string[] => {
    const medians = sides.map((s) => median(results.get(s.name)!.map(of)));
    const spreads = sides.map((s) => {
      const all = results.get(s.name)!.map(of);
      return `${Math.min(...all).toFixed(digits)}-${Math.max(...all).toFixed(digits)}`;
    });
    const cells = medians.map((m, k) => `${m.toFixed(digits)} (${spreads[k]})`);
    const ratio = medians[0]! / medians[1]!;
    return [label, ...cells, ...(sides.length === 2 ? [Number.isFinite(ratio) ? `${ratio.toFixed(2)}x` : ''] : [])];
  };
  const table: Table = {
    title: `What a delivery costs on Redis: ${tasks.toLocaleString('en')} due at once, concurrency 50, median of ${runs} (min-max)`,
    columns: ['', ...sides.map((s) => s.name), ...(sides.length === 2 ? ['this / base'] : [])],
    rows: [
      metric('deliveries/s', (c) => c.firedPerSec, 0),
      metric('client CPU, us a delivery', (c) => c.nodeUs, 1),
      metric('Redis CPU, us a delivery', (c) => c.redisUs, 1),
      ...names.flatMap((name) => [
        metric(`  ${name}.lua, us a delivery`, (c) => c.scriptsUs[name] ?? 0, 2),
        metric(`  ${name}.lua, calls a 1,000 deliveries`, (c) => ((c.scriptCalls[name] ?? 0) / tasks) * 1_000, 1),
      ]),
    ],
    notes: ['Redis CPU from INFO cpu; script times from SLOWLOG at a threshold of 0 (EVALSHA only, named by SHA1 in each checkout).'],
  };
  printTable(table);
  const file = writeResults('delivery-cost', [table], { tasks, runs, base: values.base ?? null });
  console.log(`\nresults: ${file}`);
}
