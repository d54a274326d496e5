/**
 * npm run bench -- http [--store memory|sqlite|both] [--seconds N] [--late N] [--client-threads N]
 *                        [--only lateness] [--acks inline|batched|after|all] [--runs N] [--baselines no]
 *                        [--client auto|wrk|node]
 *
 * The server as users see it: `delayq serve` in a child process (memory store and/or a
 * SQLite file in a temp dir), driven over keep-alive HTTP from this process:
 *   a. POST /v1/tasks, 64 concurrent connections, for N seconds (default 5): tasks/s; the load
 *      comes from wrk (2 threads) when it is installed, else from 2 Node client threads
 *   a'. the same load against a bare node:http and a bare fastify server (no delayq): the HTTP ceiling
 *   b. POST /v1/tasks/batch, 1,000 tasks a batch, 8 concurrent connections, N seconds: tasks/s
 *   c. 10,000 tasks (--late) due within 1 s, consumed by 8 reservers long-polling
 *      /v1/topics/late/reserve (max 100) that ack each delivery: lateness, taken when the
 *      reserve answer arrives here (arrival - runAt), p50 / p99 / max; acks one request
 *      each as deliveries arrive (inline), one POST /v1/tasks/ack per reserve answer
 *      (batched), or one each after all arrived (after)
 * `--only lateness` skips a and b (a lateness run takes ~20 s instead of the full bench);
 * `--acks` picks the acking modes; `--runs N` repeats the lateness runs N times, alternating
 * the stores run by run, so variants are compared side by side on a noisy machine.
 * Targets (issue 4): a >= 20,000/s, b >= 150,000/s, c p99 <= 20 ms.
 * Client and server share the machine: the client's own CPU is in every figure.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { percentile, preciseNow, printTable, writeResults, type Table } from './report.js';

const ROOT = join(import.meta.dirname, '..');

function option(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
}

interface Server {
  readonly port: number;
  readonly child: ChildProcess;
}

async function startServer(store: string): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', '--store', store], {
    cwd: ROOT,
    env: { ...process.env, DELAYQ_TOKEN: '', DELAYQ_LOG_LEVEL: 'info' },
    // stdout carries the log; only the line with the address is read, the rest is drained.
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return { port: await listeningPort(child, 'server'), child };
}

/** The port a child server prints as `"address":"http://host:port"` on a line of stdout. */
function listeningPort(child: ChildProcess, what: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /"address":"http:\/\/[^:]+:(\d+)"/.exec(line);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}`)));
  });
}

/**
 * Baselines for the single-schedule load: servers that do no delayq work at all, so the
 * table shows what HTTP alone costs on this machine. Each reads the JSON body, parses it
 * and answers 201 with a small JSON object, in a child process like delayq's server.
 */
const BASELINE_SERVERS = {
  'node:http': `
const http = require('node:http');
let n = 0;
const server = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    JSON.parse(body);
    const out = JSON.stringify({ id: 'b' + n++, runAt: Date.now() });
    res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ address: 'http://127.0.0.1:' + server.address().port })));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`,
  fastify: `
const fastify = require('fastify')({ logger: false });
let n = 0;
fastify.post('/v1/tasks', async (req, reply) => reply.code(201).send({ id: 'b' + n++, runAt: Date.now() }));
fastify.listen({ port: 0, host: '127.0.0.1' }).then(() => console.log(JSON.stringify({ address: 'http://127.0.0.1:' + fastify.server.address().port })));
process.on('SIGTERM', () => fastify.close().then(() => process.exit(0)));
`,
} as const;

async function startBaseline(kind: keyof typeof BASELINE_SERVERS): Promise<Server> {
  const child = spawn(process.execPath, ['-e', BASELINE_SERVERS[kind]], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return { port: await listeningPort(child, 'baseline server'), child };
}

async function stopServer(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
}

/** One keep-alive HTTP client with a fixed number of sockets. */
function httpClient(port: number, sockets: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  const call = (method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        { host: '127.0.0.1', port, method, path, agent, headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  return { call, close: () => agent.destroy() };
}

/**
 * The load generator for single schedules runs in worker threads: one Node thread cannot
 * keep 64 connections busy (profiled: the server sat half idle while the client thread was
 * saturated). The workers are plain JavaScript so they need no TypeScript loader.
 */
const SINGLES_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { Agent, request } = require('node:http');
const { port, connections, until, offset } = workerData;
const agent = new Agent({ keepAlive: true, maxSockets: connections });
let done = 0, n = offset, failed = null;
function call() {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ topic: 'single', delayMs: 3600000, payload: { n: n++ } });
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/tasks', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 201 ? resolve() : reject(new Error('status ' + res.statusCode))));
    });
    req.on('error', reject);
    req.end(body);
  });
}
Promise.all(Array.from({ length: connections }, async () => { while (Date.now() < until) { await call(); done++; } }))
  .catch((e) => (failed = String(e)))
  .finally(() => { agent.destroy(); parentPort.postMessage({ done, failed }); });
`;

/** The load generator of the single-request runs: wrk when installed (it needs far less CPU
 * than a Node client, which shares the machine's 2 cores with the server), else Node. */
type SinglesClient = 'wrk' | 'node';

function wrkInstalled(): boolean {
  return spawnSync('wrk', ['--version'], { encoding: 'utf8' }).error === undefined;
}

/** wrk, 2 threads and 64 connections, POSTing one task per request; fails on any non-201. */
async function singlesWithWrk(port: number, seconds: number, dir: string): Promise<number> {
  const script = join(dir, 'post-task.lua');
  writeFileSync(
    script,
    [
      'wrk.method = "POST"',
      'wrk.headers["content-type"] = "application/json"',
      `wrk.body = '${JSON.stringify({ topic: 'single', delayMs: 3_600_000, payload: { n: 1 } })}'`,
    ].join('\n'),
  );
  const out = await new Promise<string>((resolve, reject) =>
    execFile('wrk', ['-t2', '-c64', `-d${seconds}s`, '-s', script, `http://127.0.0.1:${port}/v1/tasks`], { encoding: 'utf8' }, (error, stdout) =>
      error ? reject(new Error(`wrk failed: ${error.message}`)) : resolve(stdout),
    ),
  );
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out);
  if (non2xx) throw new Error(`wrk: ${non2xx[1]} answers were errors (4xx/5xx)`);
  const errors = /Socket errors:(.*)/.exec(out);
  if (errors && /[1-9]/.test(errors[1]!)) throw new Error(`wrk: socket errors:${errors[1]}`);
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(out);
  if (!rate) throw new Error(`wrk: no rate in its output:\n${out}`);
  return Number(rate[1]);
}

async function singles(port: number, seconds: number, threads = 2): Promise<number> {
  const { Worker } = await import('node:worker_threads');
  const until = Date.now() + seconds * 1000;
  const started = preciseNow();
  const counts = await Promise.all(
    Array.from({ length: threads }, (_, t) => {
      const worker = new Worker(SINGLES_WORKER, { eval: true, workerData: { port, connections: 64 / threads, until, offset: t * 1e9 } });
      return new Promise<number>((resolve, reject) =>
        worker.once('message', (m: { done: number; failed: string | null }) => (m.failed ? reject(new Error(m.failed)) : resolve(m.done))),
      );
    }),
  );
  return counts.reduce((a, b) => a + b, 0) / ((preciseNow() - started) / 1000);
}

async function batches(port: number, seconds: number): Promise<number> {
  const http = httpClient(port, 8);
  const end = Date.now() + seconds * 1000;
  let done = 0;
  let n = 0;
  const started = preciseNow();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (Date.now() < end) {
        const tasks = Array.from({ length: 1_000 }, () => ({ topic: 'batch', delayMs: 3_600_000, payload: { n: n++ } }));
        const res = await http.call('POST', '/v1/tasks/batch', { tasks });
        if (res.status !== 200) throw new Error(`POST /v1/tasks/batch: ${res.status} ${res.text.slice(0, 200)}`);
        done += tasks.length;
      }
    }),
  );
  const rate = done / ((preciseNow() - started) / 1000);
  http.close();
  return rate;
}

interface Lateness {
  p50: number;
  p99: number;
  max: number;
  received: number;
  /** How long before the first runAt the last batch was stored (negative: the run is not valid). */
  storedAheadMs: number;
}

/**
 * `inline`: each delivery is acked as it arrives (a real consumer: one ack request per task,
 * 10,000 acks/s on top of the reserves). `after`: the acks are sent once every task has
 * arrived, so the figure is delivery lateness alone, without the acks competing for the CPU.
 */
type Acking = 'inline' | 'batched' | 'after';

async function lateness(port: number, count: number, acking: Acking): Promise<Lateness> {
  // Reserves, acks and the batches that schedule the tasks each on their own connections,
  // so a reserve never queues behind acks in the client, and the batches never wait for a
  // socket held by a long-poll (they used to, for up to waitMs: the tasks were then stored
  // after they fell due, and the run measured the scheduling, not the delivery).
  const http = httpClient(port, 8);
  const ackHttp = httpClient(port, 32);
  const scheduleHttp = httpClient(port, 1);
  const lates: number[] = [];
  const acks: Promise<unknown>[] = [];
  const deferred: { id: string; receipt: string }[] = [];
  let stop = false;
  const reservers = Array.from({ length: 8 }, async () => {
    while (!stop) {
      const res = await http.call('POST', '/v1/topics/late/reserve', { max: 100, waitMs: 1_000 });
      const arrived = preciseNow();
      const { tasks } = JSON.parse(res.text) as { tasks: { id: string; runAt: number; receipt: string }[] };
      for (const task of tasks) {
        lates.push(arrived - task.runAt);
        if (acking === 'inline') acks.push(ackHttp.call('POST', `/v1/tasks/${task.id}/ack`, { receipt: task.receipt }));
        else if (acking === 'after') deferred.push(task);
      }
      // A consumer that settles what one reserve gave it with one request.
      if (acking === 'batched' && tasks.length > 0)
        acks.push(ackHttp.call('POST', '/v1/tasks/ack', { acks: tasks.map((t) => ({ id: t.id, receipt: t.receipt })) }));
      if (lates.length >= count) stop = true;
    }
  });
  // Due from 1 s after scheduling (so every batch is stored first), spread over 1 s.
  const base = Date.now() + 1_000;
  for (let i = 0; i < count; i += 1_000) {
    const tasks = Array.from({ length: Math.min(1_000, count - i) }, (_, k) => ({ topic: 'late', runAt: base + Math.floor(((i + k) / count) * 1_000) }));
    const res = await scheduleHttp.call('POST', '/v1/tasks/batch', { tasks });
    if (res.status !== 200) throw new Error(`batch: ${res.status}`);
  }
  const storedAheadMs = base - Date.now();
  if (storedAheadMs < 0) console.warn(`  the tasks were stored ${-storedAheadMs} ms after the first fell due: this run measures scheduling too`);
  const timeout = setTimeout(() => (stop = true), 30_000);
  await Promise.all(reservers);
  clearTimeout(timeout);
  await Promise.all(acks);
  for (let i = 0; i < deferred.length; i += 64)
    await Promise.all(deferred.slice(i, i + 64).map((t) => ackHttp.call('POST', `/v1/tasks/${t.id}/ack`, { receipt: t.receipt })));
  http.close();
  ackHttp.close();
  scheduleHttp.close();
  lates.sort((a, b) => a - b);
  return { p50: percentile(lates, 50), p99: percentile(lates, 99), max: lates.at(-1) ?? Number.NaN, received: lates.length, storedAheadMs };
}

export async function run(args: string[]): Promise<void> {
  const which = option(args, 'store', 'both');
  const seconds = Number(option(args, 'seconds', '5'));
  const late = Number(option(args, 'late', '10000'));
  const clientThreads = Number(option(args, 'client-threads', '2'));
  const clientOption = option(args, 'client', 'auto');
  if (!['auto', 'wrk', 'node'].includes(clientOption)) throw new Error(`--client: expected auto, wrk or node (got ${clientOption})`);
  const client: SinglesClient = clientOption === 'node' || (clientOption === 'auto' && !wrkInstalled()) ? 'node' : 'wrk';
  const only = option(args, 'only', 'all');
  if (only !== 'all' && only !== 'lateness') throw new Error(`--only: expected lateness (got ${only})`);
  const ackOption = option(args, 'acks', 'all');
  if (!['inline', 'batched', 'after', 'all'].includes(ackOption)) throw new Error(`--acks: expected inline, batched, after or all (got ${ackOption})`);
  const ackModes = (['inline', 'batched', 'after'] as const).filter((mode) => ackOption === 'all' || ackOption === mode);
  const runs = Number(option(args, 'runs', '1'));
  const baselines = option(args, 'baselines', 'yes') !== 'no';
  const dir = mkdtempSync(join(tmpdir(), 'delayq-http-bench-'));
  const stores = [...(which === 'sqlite' ? [] : ['memory']), ...(which === 'memory' ? [] : [`sqlite:${join(dir, 'bench.db')}`])];
  const rows: (string | number | null)[][] = [];
  let files = 0;
  try {
    for (let round = 0; round < runs; round++) {
      for (const store of stores) {
        const label = store.startsWith('sqlite') ? 'sqlite' : 'memory';
        let single: number | null = null;
        let batched: number | null = null;
        if (only === 'all') {
          console.log(`\n${label}: single schedules...`);
          const server = await startServer(store);
          single = client === 'wrk' ? await singlesWithWrk(server.port, seconds, dir) : await singles(server.port, seconds, clientThreads);
          console.log(`${label}: batches...`);
          batched = await batches(server.port, seconds);
          await stopServer(server);
          // A fresh server, so the lateness run does not share its store with a million far tasks.
          if (label === 'sqlite') rmSync(join(dir, 'bench.db'), { force: true });
        }
        const lates = new Map<string, Lateness>();
        for (const acking of ackModes) {
          const server = await startServer(label === 'sqlite' ? `sqlite:${join(dir, `late-${files++}.db`)}` : store);
          console.log(`${label}: lateness, acks ${acking}...`);
          const result = await lateness(server.port, late, acking);
          console.log(`  p50 ${result.p50.toFixed(1)} / p99 ${result.p99.toFixed(1)} / max ${result.max.toFixed(1)} ms (${result.received} received; stored ${result.storedAheadMs} ms before the first was due)`);
          lates.set(acking, result);
          await stopServer(server);
        }
        const inline = lates.get('inline');
        const batchedAcks = lates.get('batched');
        const after = lates.get('after');
        rows.push([
          runs > 1 ? `${label} (run ${round + 1})` : label,
          single,
          batched,
          inline?.p50 ?? null,
          inline?.p99 ?? null,
          inline?.max ?? null,
          batchedAcks?.p50 ?? null,
          batchedAcks?.p99 ?? null,
          batchedAcks?.max ?? null,
          after?.p50 ?? null,
          after?.p99 ?? null,
          after?.max ?? null,
        ]);
      }
      if (only === 'all' && baselines) {
        for (const kind of Object.keys(BASELINE_SERVERS) as (keyof typeof BASELINE_SERVERS)[]) {
          console.log(`\nbaseline ${kind}: single requests...`);
          const server = await startBaseline(kind);
          const rate = client === 'wrk' ? await singlesWithWrk(server.port, seconds, dir) : await singles(server.port, seconds, clientThreads);
          await stopServer(server);
          rows.push([`baseline: bare ${kind}, no delayq${runs > 1 ? ` (run ${round + 1})` : ''}`, rate, null, null, null, null, null, null, null, null, null, null]);
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const table: Table = {
    title: `HTTP API (server in a child process; ${seconds} s per throughput run, singles from ${client === 'wrk' ? 'wrk, 2 threads' : `${clientThreads} Node client threads`}; ${late} tasks due within 1 s for lateness)`,
    columns: [
      'store',
      'POST /v1/tasks, 64 conns (tasks/s)',
      'batch of 1,000, 8 conns (tasks/s)',
      'lateness p50 / acked inline (ms)',
      'p99',
      'max',
      'lateness p50 / acked per reserve (ms)',
      'p99',
      'max',
      'lateness p50 / acks after (ms)',
      'p99',
      'max',
    ],
    rows,
    notes: [
      'Targets: >= 20,000 single schedules/s, >= 150,000 tasks/s batched, lateness p99 <= 20 ms.',
      'Baselines: the same single-request load against a server that only parses the body and answers 201 (bare node:http, and bare fastify with no schema): the ceiling HTTP alone puts on the first column on this machine.',
      `Single-request load: ${client === 'wrk' ? 'wrk (2 threads, 64 connections, one POST /v1/tasks at a time on each)' : `Node's http client in ${clientThreads} worker threads (wrk not installed: apt-get install wrk), which takes CPU from the server`}.`,
      'Lateness: arrival of the reserve answer at the client - runAt; 8 long-polling reservers, max 100 a reserve; every task is acked: one request each as it arrives (inline), one POST /v1/tasks/ack for each reserve answer as it arrives (per reserve), or one request each once all have arrived (after).',
      `Machine: ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), shared with other work while this ran; the load generator runs on the same CPUs as the server.`,
    ],
  };
  printTable(table);
  console.log(`\nresults: ${writeResults(only === 'all' ? 'http' : 'http-lateness', [table])}`);
}
