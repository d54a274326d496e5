/**
 * npm run bench -- ui [--store memory|sqlite] [--pending N] [--seconds N] [--runs N]
 *                     [--histogram N] [--histogram-stores memory,sqlite,redis]
 *                     [--skip-histogram | --only-histogram]
 *
 * What looking at the queue costs the server (issue 26):
 *   a. `delayq serve` in a child process holding N pending tasks (default 1,000,000, 20
 *      topics, due over the next 24 h). The server's CPU time (/proc/<pid>/stat) over a
 *      window of S seconds (default 20) with the dashboard's overview open, that is its
 *      refresh every 2 s (GET /v1/stats + GET /v1/activity, exactly the page's requests),
 *      minus the same window with nothing open (the baseline, measured in the same run,
 *      alternately): % of one core. Median of 3 (--runs). The timeline page's refresh (the
 *      next hour every 10 s, the next 7 days every 60 s) the same way. And the server CPU
 *      per refresh, 300 back to back, less exposed to the engine's own background work
 *      landing in one window. Target: overview <= 2 % of a core.
 *   b. GET /metrics against that server: 30 scrapes, wall time at the client over loopback
 *      (p50, max). Target <= 50 ms.
 *   c. The due-time histogram (the timeline's store query) with 10,000,000 pending tasks
 *      (--histogram) spread over 30 days in 10 topics, in this process: the memory store,
 *      a SQLite file and a throwaway redis-server (16 shards); per minute over the next
 *      hour and per hour over the next 7 days, all topics and one; median of 5.
 *      --skip-histogram keeps the last run's table; --only-histogram skips a and b.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type DueHistogramQuery, type TaskStore } from '../src/core/ports/index.js';
import { DUE_HISTOGRAM_GRAIN_MS } from '../src/core/due-histogram.js';
import { DEFAULT_BACKOFF } from '../src/core/task/backoff.js';
import type { NewTaskRecord } from '../src/core/task/model.js';
import { MemoryStore } from '../src/stores/memory/memory-store.js';
import { openRedisStore } from '../src/stores/redis/index.js';
import { openSqliteStore } from '../src/stores/sqlite/index.js';
import { storeSystemClock } from '../src/stores/system-clock.js';
import { startRedis } from '../test/helpers/redis-servers.js';
import { percentile, preciseNow, printTable, writeResults, type Table } from './report.js';

const ROOT = join(import.meta.dirname, '..');
const HOUR = 3_600_000;

function option(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
}

interface Server {
  readonly port: number;
  readonly child: ChildProcess;
}

async function startServer(store: string): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', '--store', store, '--max-batch', '10000'], {
    cwd: ROOT,
    env: { ...process.env, DELAYQ_TOKEN: '', DELAYQ_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /"address":"http:\/\/[^:]+:(\d+)"/.exec(line);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { port, child };
}

async function stopServer(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
}

function call(port: number, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request({ host: '127.0.0.1', port, method, path, headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** The child's CPU time so far (user + system), in seconds. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command: state is field 3; utime and stime are fields 14 and 15 (1-based), in clock ticks (100/s on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU seconds per second of the server over `seconds`, while `every` ms `visit` runs (none: idle). */
async function cpuShare(server: Server, seconds: number, every: number | null, visit: () => Promise<void>): Promise<number> {
  const pid = server.child.pid!;
  const started = preciseNow();
  const before = cpuSeconds(pid);
  const end = started + seconds * 1000;
  if (every === null) await sleep(seconds * 1000);
  else {
    for (let next = started; next < end; next += every) {
      await sleep(Math.max(0, next - preciseNow()));
      await visit();
    }
    await sleep(Math.max(0, end - preciseNow()));
  }
  const after = cpuSeconds(pid);
  return (after - before) / ((preciseNow() - started) / 1000);
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function fill(port: number, pending: number): Promise<number> {
  const started = preciseNow();
  const now = Date.now();
  const batch = 10_000;
  for (let i = 0; i < pending; i += batch) {
    const tasks = Array.from({ length: Math.min(batch, pending - i) }, (_, k) => ({
      topic: `topic-${(i + k) % 20}`,
      payload: { n: i + k },
      runAt: now + 120_000 + Math.floor(((i + k) * 7919) % 86_400_000),
    }));
    const answer = await call(port, 'POST', '/v1/tasks/batch', { tasks });
    if (answer.status !== 200) throw new Error(`batch: ${answer.status} ${answer.text.slice(0, 200)}`);
  }
  return (preciseNow() - started) / 1000;
}

async function serverPart(args: string[]): Promise<Table[]> {
  const storeKind = option(args, 'store', 'memory');
  const pending = Number(option(args, 'pending', '1000000'));
  const seconds = Number(option(args, 'seconds', '20'));
  const runs = Number(option(args, 'runs', '3'));
  const dir = mkdtempSync(join(tmpdir(), 'delayq-ui-bench-'));
  const server = await startServer(storeKind === 'sqlite' ? `sqlite:${join(dir, 'ui.db')}` : 'memory');
  try {
    console.log(`  filling ${pending.toLocaleString('en-US')} pending tasks (${storeKind})...`);
    const fillSeconds = await fill(server.port, pending);
    const stats = JSON.parse((await call(server.port, 'GET', '/v1/stats')).text) as { counts: { pending: number } };
    // V8's memory reducer shrinks the heap the fill grew with full collections (~1.3 s of
    // marking each over ~0.5 GB) at the first activity after it: let it run out first, under
    // 30 s of the requests measured below, then 10 s idle (seen with --trace-gc).
    console.log(`  ${stats.counts.pending.toLocaleString('en-US')} pending after ${fillSeconds.toFixed(1)} s; settling 40 s`);

    const overview = async (): Promise<void> => {
      await Promise.all([call(server.port, 'GET', '/v1/stats'), call(server.port, 'GET', '/v1/activity')]);
    };
    // The timeline page: the next hour every 10 s, the next 7 days every 60 s.
    let timelineVisits = 0;
    const timelineHours = async (): Promise<void> => {
      const hourFrom = Math.floor(Date.now() / HOUR) * HOUR;
      await call(server.port, 'GET', `/v1/timeline?from=${hourFrom}&to=${hourFrom + 7 * 24 * HOUR}&bucketMs=${HOUR}`);
    };
    const timeline = async (): Promise<void> => {
      await Promise.all([call(server.port, 'GET', '/v1/timeline?bucketMs=60000'), timelineVisits++ % 6 === 0 ? timelineHours() : undefined]);
    };
    const timelineBoth = async (): Promise<void> => {
      await Promise.all([call(server.port, 'GET', '/v1/timeline?bucketMs=60000'), timelineHours()]);
    };
    for (let i = 0; i < 15; i++) {
      await Promise.all([overview(), i % 5 === 0 ? timelineBoth() : undefined, call(server.port, 'GET', '/metrics')]);
      await sleep(2_000);
    }
    await sleep(10_000);
    const idle: number[] = [];
    const withOverview: number[] = [];
    const withTimeline: number[] = [];
    for (let run = 0; run < runs; run++) {
      idle.push(await cpuShare(server, seconds, null, async () => undefined));
      withOverview.push(await cpuShare(server, seconds, 2_000, overview));
      withTimeline.push(await cpuShare(server, seconds, 10_000, timeline));
      console.log(`  run ${run + 1}: idle ${(idle[run]! * 100).toFixed(2)} %, overview ${(withOverview[run]! * 100).toFixed(2)} %, timeline ${(withTimeline[run]! * 100).toFixed(2)} % of a core`);
    }
    // Each request alone, for the per-refresh cost.
    const time = async (visit: () => Promise<void>, n: number): Promise<number[]> => {
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const start = preciseNow();
        await visit();
        times.push(preciseNow() - start);
      }
      return times.sort((a, b) => a - b);
    };
    // The marginal cost, less exposed to the engine's own background work landing in one
    // window (a wheel split, a collection): server CPU over 300 refreshes back to back.
    const perRefresh = async (visit: () => Promise<void>, n: number): Promise<number> => {
      const pid = server.child.pid!;
      const before = cpuSeconds(pid);
      const t0 = preciseNow();
      for (let i = 0; i < n; i++) await visit();
      const wall = (preciseNow() - t0) / 1000;
      return ((cpuSeconds(pid) - before - median(idle) * wall) / n) * 1000;
    };
    const overviewCpuMs = await perRefresh(overview, 300);
    const timelineCpuMs = await perRefresh(timelineBoth, 100);
    const overviewTimes = await time(overview, 30);
    const timelineTimes = await time(timelineBoth, 10);
    const scrapes = await time(async () => {
      const answer = await call(server.port, 'GET', '/metrics');
      if (answer.status !== 200) throw new Error(`/metrics: ${answer.status}`);
    }, 30);
    const scrapeBytes = (await call(server.port, 'GET', '/metrics')).text.length;

    const idleShare = median(idle);
    const overviewCost = median(withOverview.map((v, i) => v - idle[i]!)) * 100;
    const timelineCost = median(withTimeline.map((v, i) => v - idle[i]!)) * 100;
    return [
      {
        title: `Dashboard and metrics cost on the server (${storeKind}, ${stats.counts.pending.toLocaleString('en-US')} pending, 20 topics)`,
        columns: ['measure', 'value', 'target', 'met'],
        rows: [
          ['a. server idle (% of a core, the baseline)', idleShare * 100, null, null],
          ['a. overview open, refresh every 2 s (% of a core over the baseline)', overviewCost, '<= 2', overviewCost <= 2 ? 'yes' : 'NO'],
          ['a. timeline open: next hour every 10 s, next 7 days every 60 s (% of a core over the baseline)', timelineCost, null, null],
          ['a. server CPU per overview refresh, 300 back to back (ms)', overviewCpuMs, null, null],
          ['a. the same at one refresh per 2 s (% of a core)', overviewCpuMs / 20, '<= 2', overviewCpuMs / 20 <= 2 ? 'yes' : 'NO'],
          ['a. server CPU per timeline refresh of both views, 100 back to back (ms)', timelineCpuMs, null, null],
          ['a. one overview refresh (stats + activity), p50 (ms)', percentile(overviewTimes, 50), null, null],
          ['a. one timeline refresh of both views (60 minutes + 168 hours), p50 (ms)', percentile(timelineTimes, 50), null, null],
          ['b. GET /metrics, p50 (ms)', percentile(scrapes, 50), '<= 50', percentile(scrapes, 50) <= 50 ? 'yes' : 'NO'],
          ['b. GET /metrics, p90 (ms)', percentile(scrapes, 90), '<= 50', percentile(scrapes, 90) <= 50 ? 'yes' : 'NO'],
          ['b. GET /metrics, max of 30 (ms)', scrapes[scrapes.length - 1]!, null, null],
          ['b. /metrics size (bytes)', scrapeBytes, null, null],
        ],
        notes: [
          `CPU from /proc/<pid>/stat over ${seconds} s windows, idle / overview / timeline alternating, median of ${runs}; the baseline is the idle window of the same run.`,
          'Times are wall times at the client over loopback, the client sharing the machine.',
        ],
      },
    ];
  } finally {
    await stopServer(server);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function histogramPart(args: string[]): Promise<Table[]> {
  const n = Number(option(args, 'histogram', '10000000'));
  const rows: (string | number | null)[][] = [];
  const dir = mkdtempSync(join(tmpdir(), 'delayq-ui-histogram-'));
  try {
    for (const kind of option(args, 'histogram-stores', 'memory,sqlite,redis').split(',')) {
      const now = Date.now();
      const redis = kind === 'redis' ? await startRedis() : null;
      const store: TaskStore =
        kind === 'memory'
          ? new MemoryStore()
          : kind === 'sqlite'
            ? await openSqliteStore(join(dir, 'h.db'), { clock: storeSystemClock })
            : await openRedisStore(`redis://127.0.0.1:${redis!.port}`, { clock: storeSystemClock, prefix: 'histogram' });
      // The loader's first read: near tasks go to the SQLite store's index, far ones are parked.
      await store.tasks.loadDue(now + 60_000, null, 1);
      const started = preciseNow();
      const batch = 10_000;
      for (let i = 0; i < n; i += batch) {
        const tasks: NewTaskRecord[] = [];
        for (let k = i; k < Math.min(n, i + batch); k++)
          tasks.push({ id: `h${k}`, topic: `t${k % 10}`, payload: '{}', runAt: now + 60_000 + ((k * 104_729) % (30 * 24 * HOUR)), maxAttempts: 3, ttrMs: 30_000, backoff: DEFAULT_BACKOFF });
        await store.tasks.schedule(tasks, now);
      }
      const fillSeconds = (preciseNow() - started) / 1000;
      const from = Math.floor(now / DUE_HISTOGRAM_GRAIN_MS) * DUE_HISTOGRAM_GRAIN_MS;
      const hourFrom = Math.floor(now / HOUR) * HOUR;
      const queries: [string, DueHistogramQuery][] = [
        ['per minute, next hour, all topics', { from, to: from + HOUR, bucketMs: 60_000 }],
        ['per minute, next hour, one topic', { from, to: from + HOUR, bucketMs: 60_000, topic: 't3' }],
        ['per hour, next 7 days, all topics', { from: hourFrom, to: hourFrom + 7 * 24 * HOUR, bucketMs: HOUR }],
        ['per hour, next 7 days, one topic', { from: hourFrom, to: hourFrom + 7 * 24 * HOUR, bucketMs: HOUR, topic: 't3' }],
        ['per day, next 30 days, all topics', { from: hourFrom, to: hourFrom + 30 * 24 * HOUR, bucketMs: 24 * HOUR }],
      ];
      console.log(`  ${kind}: ${n.toLocaleString('en-US')} pending in ${fillSeconds.toFixed(1)} s`);
      for (const [what, query] of queries) {
        const times: number[] = [];
        let counted = 0;
        let covered = 0;
        for (let r = 0; r < 5; r++) {
          const t0 = preciseNow();
          const answer = await store.tasks.dueHistogram(query);
          times.push(preciseNow() - t0);
          counted = answer.counts.reduce((a, b) => a + b, 0);
          covered = answer.coveredUntil;
        }
        const coverage = covered >= query.to ? 'all' : `${((covered - query.from) / HOUR).toFixed(1)} h`;
        rows.push([`${kind}: ${what}`, median(times), counted, coverage]);
      }
      await store.close();
      await redis?.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    {
      title: `Due-time histogram (the timeline's store query), ${n.toLocaleString('en-US')} pending over 30 days, 10 topics`,
      columns: ['query', 'ms (median of 5)', 'tasks counted', 'index covers'],
      rows,
      notes: [
        'memory: per-topic counts by minute, kept as tasks move: cost ~ minutes asked x topics, whatever the number of tasks.',
        'SQLite: a range of the index tasks_due grouped by bucket (cost ~ tasks in the range up to the parking frontier, ~18.6 to 37 h ahead), plus parked_days (migration 0009) for the tasks parked beyond it: buckets of whole hours cover everything.',
        'Redis (16 shards): ZCOUNT of delayed per bucket and shard, plus the parked counts per hour (and topic); finer buckets read the park lists of the range, a topic reads the delayed members of the range: at most 100,000 tasks read one by one a query.',
      ],
    },
  ];
}

/** The last run's tables that this run does not measure (each keeps its own run and date in the commit history). */
function lastTables(keep: (table: Table) => boolean, flag: string): Table[] {
  try {
    const last = JSON.parse(readFileSync(join(import.meta.dirname, 'results', 'ui-latest.json'), 'utf8')) as { tables: Table[] };
    return last.tables.filter(keep).map((t) => ({ ...t, notes: [...(t.notes ?? []), `From an earlier run (this one had ${flag}).`] }));
  } catch {
    return [];
  }
}

export async function run(args: string[]): Promise<void> {
  const tables: Table[] = args.includes('--only-histogram') ? lastTables((t) => !t.title.startsWith('Due-time histogram'), '--only-histogram') : [...(await serverPart(args))];
  for (const table of tables) printTable(table);
  if (!args.includes('--skip-histogram')) {
    const histogram = await histogramPart(args);
    for (const table of histogram) printTable(table);
    tables.push(...histogram);
  } else {
    tables.push(...lastTables((t) => t.title.startsWith('Due-time histogram'), '--skip-histogram'));
  }
  console.log(`\nresults: ${writeResults('ui', tables)}`);
}
