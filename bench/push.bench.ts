/**
 * npm run bench -- push [--tasks N] [--runs N] [--bare N] [--steady-seconds N] [--concurrency N] [--only a,b,b2,c,d,e]
 *
 * Push delivery against the host's own limit, side by side in one run. A receiver (a bare
 * node:http server in a child process, answering 204) records each request's arrival time;
 * lateness is arrival - runAt (the `delayq-run-at` header). `delayq serve` runs in child
 * processes on SQLite files in a temp dir (deleted afterwards):
 *   a. the host's limit: a bare undici loop in this process POSTing --bare (30,000) requests,
 *      --concurrency (64) in flight on one keep-alive Agent, to the same receiver: requests/s
 *   a2. the same loop through undici's dispatch API (a minimal handler, as delayq's transport
 *      since ADR 0029): the stricter limit, request()'s own CPU in the sender taken out
 *   b. delayq pushing --tasks (100,000) tasks due within 10 s (runAt spread evenly), one push
 *      subscription with concurrency --concurrency: pushes/s (tasks / (last arrival - first
 *      runAt)) and lateness p50 / p99 / max
 *   b'. the same number of tasks all due at the same instant (a backlog): the push path's
 *      capacity, which (b) cannot show above its due rate of tasks/10 s
 *   c. the same tasks as (b) consumed by the pull path over HTTP on a second server: 8
 *      consumers long-polling POST /v1/topics/:topic/reserve (max 100), one POST
 *      /v1/tasks/ack per answer; lateness taken when a reserve answer arrives here
 *   d. steady: 2,000 tasks/s due for --steady-seconds (10) s, pushed: lateness p99
 *   e. the first push after a start against the later ones: a fresh process (push-first-child.ts)
 *      subscribes, then 21 tasks fall due 1 s later, 50 ms apart; the first one's lateness and the
 *      others' p50 / max, with the warm-up and without it (--cold)
 * Each part runs --runs (3) times on the same servers (warm after the first run, ADR 0020);
 * the table gives the median of the runs; a ratio is the median of the runs' ratios, each
 * run's rate to the baseline (a, a2) measured in that run. Targets (issue 24): b' >= 60% of
 * a; d p99 <= 20 ms.
 * Sender, receiver and servers share the machine: every figure includes the others' CPU.
 * `--only` runs just the named parts (a2, b2 is b'), prints them and writes no results file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Agent, request, type Dispatcher } from 'undici';
import { percentile, preciseNow, printTable, writeResults, type Table } from './report.js';

const ROOT = join(import.meta.dirname, '..');

function arg(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The receiver: counts, deduplicates by webhook-id, and keeps each arrival's lateness. */
const RECEIVER = `
const http = require('node:http');
const now = () => performance.timeOrigin + performance.now();
let lat = [], count = 0, dups = 0, first = Infinity, last = 0, minRunAt = Infinity, seen = new Set();
const server = http.createServer((req, res) => {
  if (req.url === '/__stats') {
    lat.sort((a, b) => a - b);
    const at = (p) => lat.length === 0 ? null : lat[Math.min(lat.length - 1, Math.max(0, Math.ceil(p / 100 * lat.length) - 1))];
    res.end(JSON.stringify({ count, dups, first, last, minRunAt, p50: at(50), p99: at(99), max: lat.length ? lat[lat.length - 1] : null }));
    return;
  }
  if (req.url === '/__reset') {
    lat = []; count = 0; dups = 0; first = Infinity; last = 0; minRunAt = Infinity; seen = new Set();
    res.end('{}');
    return;
  }
  const t = now();
  count++;
  if (t < first) first = t;
  if (t > last) last = t;
  const runAt = Number(req.headers['delayq-run-at']);
  if (runAt > 0) { lat.push(t - runAt); if (runAt < minRunAt) minRunAt = runAt; }
  const id = req.headers['webhook-id'];
  if (id !== undefined) { if (seen.has(id)) dups++; else seen.add(id); }
  req.resume();
  req.on('end', () => { res.writeHead(204); res.end(); });
});
server.keepAliveTimeout = 120000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ address: 'http://127.0.0.1:' + server.address().port })));
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

interface Child {
  readonly port: number;
  readonly child: ChildProcess;
}

function listeningPort(child: ChildProcess, what: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /"address":"http:\/\/[^:]+:(\d+)"/.exec(line);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}`)));
  });
}

async function startReceiver(): Promise<Child> {
  const child = spawn(process.execPath, ['-e', RECEIVER], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return { port: await listeningPort(child, 'receiver'), child };
}

async function startServer(store: string): Promise<Child> {
  // PUSH_BENCH_PROF=<dir>: the servers write CPU profiles there when they exit.
  const prof = process.env['PUSH_BENCH_PROF'];
  const child = spawn(process.execPath, [...(prof ? ['--cpu-prof', '--cpu-prof-dir', prof] : []), '--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', '--store', store, '--push-allow', '127.0.0.1/32'], {
    cwd: ROOT,
    env: { ...process.env, DELAYQ_TOKEN: '', DELAYQ_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return { port: await listeningPort(child, 'server'), child };
}

async function stop(c: Child): Promise<void> {
  const exited = new Promise((resolve) => c.child.once('exit', resolve));
  c.child.kill('SIGTERM');
  await exited;
}

const agent = new Agent({ connections: 128, pipelining: 1, keepAliveTimeout: 120_000 });

async function call<T>(port: number, method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<T> {
  const res = await request(`http://127.0.0.1:${port}${path}`, {
    method,
    dispatcher: agent,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await res.body.text();
  if (res.statusCode >= 400) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return (text.length > 0 ? JSON.parse(text) : {}) as T;
}

interface ReceiverStats {
  count: number;
  dups: number;
  first: number;
  last: number;
  minRunAt: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
}

async function waitForArrivals(receiver: Child, count: number, timeoutMs: number): Promise<ReceiverStats> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stats = await call<ReceiverStats>(receiver.port, 'GET', '/__stats');
    if (stats.count >= count) return stats;
    if (Date.now() > deadline) throw new Error(`only ${stats.count} of ${count} pushes arrived in ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** Schedules `count` tasks of `topic` through POST /v1/tasks/batch, 1,000 a batch, 4 batches in flight. */
async function scheduleAll(port: number, topic: string, prefix: string, count: number, runAtOf: (i: number) => number): Promise<void> {
  const batches: { id: string; topic: string; payload: { i: number }; runAt: number }[][] = [];
  for (let from = 0; from < count; from += 1_000) {
    batches.push(Array.from({ length: Math.min(1_000, count - from) }, (_, k) => ({ id: `${prefix}-${from + k}`, topic, payload: { i: from + k }, runAt: Math.floor(runAtOf(from + k)) })));
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        await call(port, 'POST', '/v1/tasks/batch', { tasks: batch });
      }
    }),
  );
}

/** (a) The host's limit: bare undici POSTs to the receiver, `concurrency` in flight. */
async function bare(receiver: Child, total: number, concurrency: number): Promise<number> {
  const sender = new Agent({ connections: concurrency, keepAliveTimeout: 120_000 });
  const url = `http://127.0.0.1:${receiver.port}/hook`;
  const body = JSON.stringify({ i: 0 });
  let sent = 0;
  const started = preciseNow();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent < total) {
        sent++;
        const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'webhook-id': `bare-${sent}` }, dispatcher: sender });
        await res.body.dump();
      }
    }),
  );
  const rate = total / ((preciseNow() - started) / 1_000);
  await sender.close();
  return rate;
}

/**
 * (a2) The same loop through undici's dispatch API with a minimal handler (what delayq's
 * transport uses since ADR 0029): request()'s response stream and async resource cost the
 * sender CPU of its own, so (a) measures the sender as much as the host.
 */
async function bareDispatch(receiver: Child, total: number, concurrency: number): Promise<number> {
  const sender = new Agent({ connections: concurrency, keepAliveTimeout: 120_000 });
  const origin = `http://127.0.0.1:${receiver.port}`;
  const body = JSON.stringify({ i: 0 });
  let sent = 0;
  const post = (id: string): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: () => undefined,
        onResponseEnd: () => resolve(),
        onResponseError: (_controller, error) => reject(error),
      };
      sender.dispatch({ origin, path: '/hook', method: 'POST', body, headers: { 'content-type': 'application/json', 'webhook-id': id } }, handler);
    });
  const started = preciseNow();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent < total) {
        sent++;
        await post(`bare2-${sent}`);
      }
    }),
  );
  const rate = total / ((preciseNow() - started) / 1_000);
  await sender.close();
  return rate;
}

interface PushRun {
  readonly rate: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly dups: number;
}

/** (b), (b'), (d): tasks pushed by the server to the receiver. */
async function pushed(server: Child, receiver: Child, prefix: string, count: number, runAtOf: (i: number) => number): Promise<PushRun> {
  await call(receiver.port, 'POST', '/__reset');
  await scheduleAll(server.port, 'bench', prefix, count, runAtOf);
  const stats = await waitForArrivals(receiver, count, 180_000);
  return { rate: count / ((stats.last - stats.minRunAt) / 1_000), p50: stats.p50 ?? NaN, p99: stats.p99 ?? NaN, max: stats.max ?? NaN, dups: stats.dups };
}

/** (c): the same tasks reserved and acked over HTTP by 8 long-polling consumers. */
async function pulled(server: Child, prefix: string, count: number, runAtOf: (i: number) => number): Promise<PushRun> {
  await scheduleAll(server.port, 'bench', prefix, count, runAtOf);
  const lateness: number[] = [];
  let first = Infinity;
  let last = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (lateness.length < count) {
        const { tasks } = await call<{ tasks: { id: string; receipt: string; runAt: number }[] }>(server.port, 'POST', '/v1/topics/bench/reserve', { max: 100, waitMs: 1_000 });
        const at = preciseNow();
        for (const t of tasks) lateness.push(at - t.runAt);
        if (tasks.length > 0) {
          first = Math.min(first, at);
          last = Math.max(last, at);
          await call(server.port, 'POST', '/v1/tasks/ack', { acks: tasks.map((t) => ({ id: t.id, receipt: t.receipt })) });
        }
      }
    }),
  );
  const minRunAt = runAtOf(0);
  lateness.sort((x, y) => x - y);
  return { rate: count / ((last - minRunAt) / 1_000), p50: percentile(lateness, 50), p99: percentile(lateness, 99), max: lateness.at(-1) ?? NaN, dups: 0 };
}

interface FirstPush {
  readonly first: number;
  readonly p50: number;
  readonly max: number;
}

/** Part (e): one fresh process (push-first-child.ts); cold: without the warm-up. */
function firstPush(cold: boolean): Promise<FirstPush> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'push-first-child.ts'), ...(cold ? ['--cold'] : [])], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`push-first-child exited ${code}`));
      const { first, later } = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { first: number; later: number[] };
      const sorted = [...later].sort((a, b) => a - b);
      resolve({ first, p50: percentile(sorted, 50), max: sorted.at(-1) ?? NaN });
    });
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

export async function run(args: string[]): Promise<void> {
  const tasks = arg(args, 'tasks', 100_000);
  const runs = arg(args, 'runs', 3);
  const bareTotal = arg(args, 'bare', 30_000);
  const steadySeconds = arg(args, 'steady-seconds', 10);
  const concurrency = arg(args, 'concurrency', 64);
  const onlyAt = args.indexOf('--only');
  const only = onlyAt >= 0 ? new Set((args[onlyAt + 1] ?? '').split(',')) : null;
  const part = (name: string): boolean => only === null || only.has(name);
  const dir = mkdtempSync(join(tmpdir(), 'delayq-bench-push-'));
  const receiver = await startReceiver();
  const pushServer = await startServer(`sqlite:${join(dir, 'push.db')}`);
  const pullServer = await startServer(`sqlite:${join(dir, 'pull.db')}`);
  const raw: Record<string, PushRun[] | number[]> = { bare: [], bare2: [], spread: [], burst: [], pull: [], steady: [] };
  const firsts: Record<'warm' | 'cold', FirstPush[]> = { warm: [], cold: [] };
  const started = Date.now();
  try {
    await call(pushServer.port, 'PUT', '/v1/topics/bench/push', { url: `http://127.0.0.1:${receiver.port}/hook`, concurrency, timeoutMs: 10_000 });
    await sleep(200);
    for (let r = 1; r <= runs; r++) {
      if (part('a')) {
        const rate = await bare(receiver, bareTotal, concurrency);
        (raw['bare'] as number[]).push(rate);
        console.log(`run ${r}: (a) bare undici ${Math.round(rate)}/s`);
      }

      if (part('a2')) {
        const rate = await bareDispatch(receiver, bareTotal, concurrency);
        (raw['bare2'] as number[]).push(rate);
        console.log(`run ${r}: (a2) bare undici dispatch ${Math.round(rate)}/s`);
      }

      const lead = 3_000; // time to schedule before the first task falls due
      let start = Date.now() + lead;
      if (part('b')) {
      const spread = await pushed(pushServer, receiver, `s${r}`, tasks, (i) => start + (i * 10_000) / tasks);
      (raw['spread'] as PushRun[]).push(spread);
      console.log(`run ${r}: (b) push, due within 10 s: ${Math.round(spread.rate)}/s, p50 ${spread.p50.toFixed(1)} ms, p99 ${spread.p99.toFixed(1)} ms, dups ${spread.dups}`);
      }

      if (part('b2')) {
      start = Date.now() + lead;
      const burst = await pushed(pushServer, receiver, `b${r}`, tasks, () => start);
      (raw['burst'] as PushRun[]).push(burst);
      console.log(`run ${r}: (b') push, all due at once: ${Math.round(burst.rate)}/s, p50 ${burst.p50.toFixed(1)} ms, p99 ${burst.p99.toFixed(1)} ms, dups ${burst.dups}`);
      }

      if (part('c')) {
      start = Date.now() + lead;
      const pull = await pulled(pullServer, `p${r}`, tasks, (i) => start + (i * 10_000) / tasks);
      (raw['pull'] as PushRun[]).push(pull);
      console.log(`run ${r}: (c) pull over HTTP, due within 10 s: ${Math.round(pull.rate)}/s, p50 ${pull.p50.toFixed(1)} ms, p99 ${pull.p99.toFixed(1)} ms`);
      }

      if (part('d')) {
      const steadyCount = 2_000 * steadySeconds;
      start = Date.now() + lead;
      const steady = await pushed(pushServer, receiver, `d${r}`, steadyCount, (i) => start + i / 2);
      (raw['steady'] as PushRun[]).push(steady);
      console.log(`run ${r}: (d) push, steady 2,000/s: p50 ${steady.p50.toFixed(1)} ms, p99 ${steady.p99.toFixed(1)} ms, max ${steady.max.toFixed(1)} ms`);
      }

      if (part('e')) {
        for (const mode of ['warm', 'cold'] as const) {
          const first = await firstPush(mode === 'cold');
          firsts[mode].push(first);
          console.log(`run ${r}: (e) first push after a start, ${mode}: ${first.first.toFixed(1)} ms late; the 20 after it p50 ${first.p50.toFixed(1)} ms, max ${first.max.toFixed(1)} ms`);
        }
      }
    }
  } finally {
    await Promise.all([stop(pushServer), stop(pullServer), stop(receiver)]);
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  }

  if (only !== null) return;
  const m = (key: string, field: keyof PushRun): number => median((raw[key] as PushRun[]).map((x) => x[field]));
  const bareRate = median(raw['bare'] as number[]);
  const bare2Rate = median(raw['bare2'] as number[]);
  // A ratio pairs each run's rate with the baseline of the same run (the host's load drifts
  // between runs), then takes the median of the runs' ratios.
  const rates = (key: string): number[] => (key === 'bare' || key === 'bare2' ? (raw[key] as number[]) : (raw[key] as PushRun[]).map((x) => x.rate));
  const ratio = (key: string, base: 'bare' | 'bare2'): number => median(rates(key).map((rate, i) => rate / (raw[base] as number[])[i]!));
  const row = (label: string, key: string): (string | number | null)[] => [label, m(key, 'rate'), ratio(key, 'bare'), ratio(key, 'bare2'), m(key, 'p50'), m(key, 'p99'), m(key, 'max')];
  const table: Table = {
    title: `push delivery on SQLite, ${tasks.toLocaleString('en-US')} tasks, median of ${runs} runs`,
    columns: ['part', 'per s', 'of (a)', 'of (a2)', 'lateness p50 ms', 'p99 ms', 'max ms'],
    rows: [
      ['(a) bare undici POST loop (host limit)', bareRate, 1, ratio('bare', 'bare2'), null, null, null],
      ['(a2) bare undici dispatch loop (stricter host limit)', bare2Rate, ratio('bare2', 'bare'), 1, null, null, null],
      row('(b) push, due within 10 s', 'spread'),
      row("(b') push, all due at once (capacity)", 'burst'),
      row('(c) pull over HTTP (reserve + ack), due within 10 s', 'pull'),
      row('(d) push, steady 2,000/s', 'steady'),
      ...(['warm', 'cold'] as const).flatMap((mode) => {
        const of = (field: keyof FirstPush): number => median(firsts[mode].map((x) => x[field]));
        const label = mode === 'warm' ? '' : ', without the warm-up';
        return [
          [`(e) the first push after a start${label}`, null, null, null, of('first'), null, of('first')],
          [`(e) the 20 after it${label}`, null, null, null, of('p50'), null, of('max')],
        ];
      }),
    ],
    notes: [
      `Concurrency ${concurrency} in (a) and in the subscription; receiver a node:http child answering 204; lateness = arrival - runAt.`,
      `Ratios: the median of the runs' ratios, each run's rate to the baseline of the same run. (b') of (a) run by run: ${rates('burst').map((rate, i) => (rate / (raw['bare'] as number[])[i]!).toFixed(2)).join(', ')}; the ratio of the medians: ${(m('burst', 'rate') / bareRate).toFixed(2)}.`,
      `Targets: (b') >= 60% of (a): ${ratio('burst', 'bare') >= 0.6 ? 'met' : 'MISSED'} (of (a2): ${Math.round(100 * ratio('burst', 'bare2'))}%); (d) p99 <= 20 ms: ${m('steady', 'p99') <= 20 ? 'met' : 'MISSED'}.`,
      `Each run's rates (a, a2, b, b'): ${Array.from({ length: runs }, (_, i) => [(raw['bare'] as number[])[i], (raw['bare2'] as number[])[i], (raw['spread'] as PushRun[])[i]?.rate, (raw['burst'] as PushRun[])[i]?.rate].map((x) => Math.round(x ?? NaN)).join('/')).join(', ')}.`,
      `Duplicates seen by the receiver: ${(['spread', 'burst', 'steady'] as const).map((k) => (raw[k] as PushRun[]).reduce((s, x) => s + x.dups, 0)).join(', ')}. Wall time ${Math.round((Date.now() - started) / 1_000)} s.`,
    ],
  };
  printTable(table);
  console.log(`\nresults: ${writeResults('push', [table], { raw })}`);
}
