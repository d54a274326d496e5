/**
 * npm run bench -- renewal [--runs N] [--stores redis,postgres] [--seconds S] [--handler-ms H]
 *                          [--held N] [--held-ttr-ms T] [--held-seconds W] [--url PG_URL]
 *                          [--rate R] [--postgres-rate R] [--tag NAME]
 *
 * What renewing the reservations of running handlers costs (issue 46, ADR 0051), on each
 * store given (default: a throwaway redis-server this benchmark starts on a free port, and
 * the PostgreSQL at --url, a fresh schema per queue, dropped after). Each figure is the
 * median of --runs (3) runs; both sides of a comparison are measured in the same run.
 *
 *   S3  --rate (5,000; --postgres-rate for PostgreSQL alone) tasks/s for --seconds (10), each
 *       due 2 s after it is scheduled, one process,
 *       every handler taking --handler-ms (1,000) to finish (its lateness = when it started -
 *       the due time). Within: the worker's ttr is 4x the handler's time, so nothing is ever
 *       renewed. Renewed: the ttr is half the handler's time, so every reservation is
 *       renewed while its handler runs (2-3 times). The same handlers, the same concurrency
 *       (enough for every one: the rate x the handler's time x 1.6), the order of the two
 *       alternating between runs: the difference is renewal's. Also the store's extend
 *       calls per second during the renewed side, and deliveries beyond the first (a lost
 *       reservation is delivered again).
 *   held  --held (10,000) tasks due at once, each held by a handler that does not end (one
 *       worker, concurrency 10,000), over --held-seconds (12): the store's extend calls/s and
 *       reservations extended/s with a ttr of --held-ttr-ms (3,000), and on Redis the
 *       script calls/s and commands/s the server ran (INFO commandstats), and this process's
 *       CPU (process.cpuUsage), against the same 10,000 held with a ttr too long to be
 *       renewed in the window: what renewal adds.
 *
 * Store calls are counted by wrapping the store the queue runs on (a Proxy counting calls of
 * the port's `extend`, one per renewal round: one statement on PostgreSQL, one script per
 * shard touched on Redis). Prints a table and writes bench/results/renewal-latest.json
 * (renewal-<tag>-latest.json with --tag).
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { ExtendRequest, TaskRoles, TaskStore } from '../src/core/ports/index.js';
import { DelayQueue } from '../src/open-queue.js';
import { openStore } from '../src/stores/open-store.js';
import { cli, startRedis, type RedisServer } from '../test/helpers/redis-servers.js';
import { percentile, preciseNow, printTable, writeResults, type Table } from './report.js';

const PAYLOAD = { p: 'x'.repeat(64 - '{"p":""}'.length) };
const S3_DELAY_MS = 2_000;

function log(message: string): void {
  console.log(`  [${new Date().toISOString().slice(11, 19)}] ${message}`);
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor((sorted.length - 1) / 2)]!;
};

/** The store's `extend` calls (renewal rounds) and the reservations they asked for. */
class ExtendTally {
  calls = 0;
  requests = 0;
  snapshot(): { calls: number; requests: number } {
    return { calls: this.calls, requests: this.requests };
  }
}

/** `store`, with every call of the port's `extend` counted in `tally`; the rest as it is. */
function countingExtends(store: TaskStore, tally: ExtendTally): TaskStore {
  const bound = new Map<PropertyKey, unknown>();
  const extend = (requests: readonly ExtendRequest[], now: number): ReturnType<TaskRoles['extend']> => {
    tally.calls++;
    tally.requests += requests.length;
    return store.tasks.extend(requests, now);
  };
  const tasks = new Proxy(store.tasks, {
    get(target, property) {
      if (property === 'extend') return extend;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return new Proxy(store, {
    get(target, property) {
      if (property === 'tasks') return tasks;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      // Bound once: some are called on the engine's hot path.
      let fn = bound.get(property);
      if (fn === undefined) bound.set(property, (fn = (value as (...a: unknown[]) => unknown).bind(target)));
      return fn;
    },
  });
}

/** A store kind under test: where a fresh namespace lives, and what is left to clean. */
interface Target {
  readonly name: 'redis' | 'postgres';
  /** A store URL of a namespace no one else uses. */
  fresh(): string;
  /** Commands the server has processed (Redis), or null where none is read. */
  commands(): ServerCommands | null;
  /**
   * After each side: what the side left in the server goes (PostgreSQL drops its schemas, so
   * the next side does not share the host with autovacuum working through the last one's
   * dead rows: two runs of three collapsed after the first left four schemas behind).
   */
  afterSide(): Promise<void>;
  cleanup(): Promise<void>;
}

/**
 * Redis's count of commands run, from INFO commandstats: every command, those a script runs
 * included (`total`), and the script calls among them (`scripts`: EVALSHA, EVAL, FCALL, each a
 * request from a client; the rest of a script's work is its commands inside).
 */
interface ServerCommands {
  readonly total: number;
  readonly scripts: number;
}

function commandStats(port: number): ServerCommands {
  let total = 0;
  let scripts = 0;
  for (const line of cli(port, 'INFO', 'commandstats').split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (match === null) continue;
    const calls = Number(match[2]);
    total += calls;
    if (/^(evalsha|eval|evalsha_ro|eval_ro|fcall|fcall_ro)$/.test(match[1]!)) scripts += calls;
  }
  return { total, scripts };
}

async function redisTarget(): Promise<{ target: Target; server: RedisServer }> {
  const server = await startRedis({});
  let n = 0;
  const target: Target = {
    name: 'redis',
    fresh: () => `${server.url}?prefix=renewal${n++}`,
    commands: () => commandStats(server.port),
    afterSide: async () => void cli(server.port, 'FLUSHALL'),
    async cleanup() {
      await server.stop();
      server.remove();
    },
  };
  return { target, server };
}

function postgresTarget(url: string): Target {
  const schemas: string[] = [];
  return {
    name: 'postgres',
    fresh() {
      const schema = `bench_renewal_${randomBytes(4).toString('hex')}`;
      schemas.push(schema);
      return `${url}${url.includes('?') ? '&' : '?'}schema=${schema}`;
    },
    commands: () => null,
    afterSide: () => dropSchemas(),
    cleanup: () => dropSchemas(),
  };
  async function dropSchemas(): Promise<void> {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      for (const schema of schemas.splice(0)) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await admin.end();
    }
  }
}

async function openCounted(target: Target): Promise<{ queue: DelayQueue; tally: ExtendTally }> {
  const tally = new ExtendTally();
  const store = await openStore(target.fresh());
  const queue = await DelayQueue.open({ store: countingExtends(store, tally) });
  return { queue, tally };
}

// ---------------------------------------------------------------------------------------
// S3 with handlers of a fixed length, within their ttr or twice it

interface S3Side {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Deliveries beyond a task's first (a reservation lost, the task delivered again). */
  readonly again: number;
  /** Tasks never delivered within the wait (of those whose scheduling was answered). */
  readonly losses: number;
  /** Tasks whose scheduling failed (the store did not answer in time: saturated). */
  readonly unscheduled: number;
  /** The store's extend calls per second over the side (schedule to drain), and the reservations they carried per second. */
  readonly extendCallsPerSec: number;
  readonly extendedPerSec: number;
  /** This process's CPU over the side (schedule to drain), in cores: one process cannot pass 1 (its event loop) for long. */
  readonly processCores: number;
}

/** How many handlers run at once: enough for every one at `rate` (rate x the handler's time x 1.6), at most one worker's 10,000. */
const concurrencyFor = (rate: number, handlerMs: number): number => Math.min(10_000, Math.ceil(rate * (handlerMs / 1_000) * 1.6));

async function s3(queue: DelayQueue, tally: ExtendTally, topic: string, rate: number, seconds: number, handlerMs: number, ttrMs: number): Promise<S3Side> {
  const lateness: number[] = [];
  const seen = new Map<string, number>();
  let again = 0;
  const concurrency = concurrencyFor(rate, handlerMs);
  const perTick = rate / 100;
  const worker = queue.work(
    topic,
    async (d) => {
      const before = seen.get(d.id) ?? 0;
      seen.set(d.id, before + 1);
      if (before === 0) lateness.push(preciseNow() - d.runAt);
      else again++;
      await sleep(handlerMs);
    },
    { concurrency, ttrMs },
  );
  const ticks = seconds * 100;
  const before = tally.snapshot();
  const started = Date.now();
  const cpuBefore = process.cpuUsage();
  // A batch the store did not take (saturated: no connection in time) is counted, not fatal.
  const inFlight: Promise<number>[] = [];
  for (let t = 0; t < ticks; t++) {
    const n = Math.floor(((t + 1) * perTick)) - Math.floor(t * perTick);
    inFlight.push(
      queue.scheduleMany(Array.from({ length: n }, () => ({ topic, payload: PAYLOAD, runAt: Date.now() + S3_DELAY_MS }))).then(
        () => 0,
        () => n,
      ),
    );
    await sleep(Math.max(0, started + (t + 1) * 10 - Date.now()));
  }
  const unscheduled = (await Promise.all(inFlight)).reduce((a, b) => a + b, 0);
  const expected = Math.floor(ticks * perTick) - unscheduled;
  const deadline = Date.now() + 30_000;
  while (lateness.length < expected && Date.now() < deadline) await sleep(50);
  await worker.close();
  const span = (Date.now() - started) / 1_000;
  const after = tally.snapshot();
  const sorted = Float64Array.from(lateness).sort();
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length === 0 ? NaN : sorted[sorted.length - 1]!,
    again,
    losses: expected - lateness.length,
    unscheduled,
    extendCallsPerSec: (after.calls - before.calls) / span,
    extendedPerSec: (after.requests - before.requests) / span,
    processCores: ((cpu) => (cpu.user + cpu.system) / 1e6 / span)(process.cpuUsage(cpuBefore)),
  };
}

interface S3Pair {
  readonly within: S3Side;
  readonly renewed: S3Side;
  readonly ratio: number;
}

/** The S3 load: `rate` tasks/s for `seconds`, each handler taking `handlerMs`. */
interface S3Load {
  readonly rate: number;
  readonly seconds: number;
  readonly handlerMs: number;
}

async function s3Side(target: Target, load: S3Load, ttrMs: number, label: string): Promise<S3Side> {
  const { rate, seconds, handlerMs } = load;
  const { queue, tally } = await openCounted(target);
  try {
    // Warm the delivery path on this side's settings; a topic of its own, so none of its tasks counts below.
    await s3(queue, tally, 's3-warm', rate, 2, handlerMs, ttrMs);
    const side = await s3(queue, tally, 's3', rate, seconds, handlerMs, ttrMs);
    log(`${target.name} S3 ${rate}/s ${label} (handler ${handlerMs} ms, ttr ${ttrMs} ms): ${JSON.stringify(side, (_, v: unknown) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v))}`);
    return side;
  } finally {
    await queue.close();
    await target.afterSide();
  }
}

async function s3Pair(target: Target, load: S3Load, withinFirst: boolean): Promise<S3Pair> {
  const within = (): Promise<S3Side> => s3Side(target, load, load.handlerMs * 4, 'within its ttr');
  const renewed = (): Promise<S3Side> => s3Side(target, load, Math.round(load.handlerMs / 2), '2x its ttr');
  let w: S3Side, r: S3Side;
  if (withinFirst) {
    w = await within();
    r = await renewed();
  } else {
    r = await renewed();
    w = await within();
  }
  return { within: w, renewed: r, ratio: r.p99 / w.p99 };
}

// ---------------------------------------------------------------------------------------
// held: what renewal asks of the store while many reservations are held

interface HeldSide {
  readonly extendCallsPerSec: number;
  readonly extendedPerSec: number;
  /** Commands/s the Redis server ran over the window (script calls, and every command, a script's included); null on PostgreSQL. */
  readonly serverCommandsPerSec: number | null;
  readonly scriptCallsPerSec: number | null;
  /** This process's CPU time over the window, in cores (user + system seconds per second). */
  readonly processCores: number;
}

interface HeldPair {
  readonly idle: HeldSide;
  readonly renewing: HeldSide;
}

async function heldSide(target: Target, count: number, ttrMs: number, windowSeconds: number): Promise<HeldSide> {
  const { queue, tally } = await openCounted(target);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started = 0;
  let lost = 0;
  const worker = queue.work(
    'held',
    async (_d, { signal }) => {
      started++;
      signal.addEventListener('abort', () => lost++, { once: true });
      await released;
    },
    { concurrency: Math.min(10_000, count), ttrMs },
  );
  try {
    const now = Date.now();
    for (let from = 0; from < count; from += 1_000) {
      await queue.scheduleMany(Array.from({ length: Math.min(1_000, count - from) }, () => ({ topic: 'held', payload: PAYLOAD, runAt: now })));
    }
    const deadline = Date.now() + 60_000;
    while (started < count && Date.now() < deadline) await sleep(20);
    if (started < count) throw new Error(`held: only ${started} of ${count} handlers started within 60 s`);
    await sleep(Math.min(ttrMs, 2_000)); // past the first renewals' ramp
    const before = tally.snapshot();
    const commandsBefore = target.commands();
    const cpuBefore = process.cpuUsage();
    const t0 = preciseNow();
    await sleep(windowSeconds * 1_000);
    const span = (preciseNow() - t0) / 1_000;
    const cpu = process.cpuUsage(cpuBefore);
    const after = tally.snapshot();
    const commandsAfter = target.commands();
    if (lost > 0) log(`held: ${lost} reservations lost during the window`);
    return {
      extendCallsPerSec: (after.calls - before.calls) / span,
      extendedPerSec: (after.requests - before.requests) / span,
      serverCommandsPerSec: commandsBefore === null || commandsAfter === null ? null : (commandsAfter.total - commandsBefore.total) / span,
      scriptCallsPerSec: commandsBefore === null || commandsAfter === null ? null : (commandsAfter.scripts - commandsBefore.scripts) / span,
      processCores: (cpu.user + cpu.system) / 1e6 / span,
    };
  } finally {
    release();
    await worker.close();
    await queue.close();
    await target.afterSide();
  }
}

async function heldPair(target: Target, count: number, ttrMs: number, windowSeconds: number): Promise<HeldPair> {
  // A ttr longer than the whole side: none of the reservations comes up for renewal.
  const idle = await heldSide(target, count, (windowSeconds + 90) * 1_000, windowSeconds);
  const renewing = await heldSide(target, count, ttrMs, windowSeconds);
  log(`${target.name} held ${count}: idle ${JSON.stringify(idle)}; renewing (ttr ${ttrMs} ms) ${JSON.stringify(renewing)}`);
  return { idle, renewing };
}

// ---------------------------------------------------------------------------------------

interface StoreRuns {
  readonly s3: S3Pair[];
  readonly held: HeldPair[];
  /** Why the store's runs stopped early (the figures are those of the runs finished before). */
  failed?: string;
}

export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string', default: '3' },
      rate: { type: 'string', default: '5000' },
      'postgres-rate': { type: 'string' },
      stores: { type: 'string', default: 'redis,postgres' },
      seconds: { type: 'string', default: '10' },
      'handler-ms': { type: 'string', default: '1000' },
      held: { type: 'string', default: '10000' },
      'held-ttr-ms': { type: 'string', default: '3000' },
      'held-seconds': { type: 'string', default: '12' },
      tag: { type: 'string' },
      url: { type: 'string', default: process.env['DELAYQ_TEST_PG'] ?? 'postgres://postgres@127.0.0.1:5432/test' },
    },
  });
  const whole = (name: string, value: string, min: number): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} wants a whole number >= ${min}, got ${value}`);
    return n;
  };
  const runs = whole('runs', values.runs, 1);
  const seconds = whole('seconds', values.seconds, 2);
  const rate = whole('rate', values.rate, 100);
  const postgresRate = whole('postgres-rate', values['postgres-rate'] ?? values.rate, 100);
  const handlerMs = whole('handler-ms', values['handler-ms'], 20);
  const held = whole('held', values.held, 1);
  const heldTtrMs = whole('held-ttr-ms', values['held-ttr-ms'], 100);
  const heldSeconds = whole('held-seconds', values['held-seconds'], 2);
  if (held > 10_000) throw new Error('--held: at most 10,000 (one worker\'s most concurrency)');
  const stores = values.stores.split(',');
  for (const s of stores) if (s !== 'redis' && s !== 'postgres') throw new Error(`--stores: redis and/or postgres, got ${s}`);

  const results = new Map<string, StoreRuns>();
  const tables: Table[] = [];
  for (const name of stores) {
    const { target, version } =
      name === 'redis'
        ? await redisTarget().then(({ target: t, server }) => ({ target: t, version: `Redis ${/redis_version:(\S+)/.exec(cli(server.port, 'INFO', 'server'))?.[1] ?? '?'}` }))
        : { target: postgresTarget(values.url), version: 'PostgreSQL' };
    const load: S3Load = { rate: name === 'postgres' ? postgresRate : rate, seconds, handlerMs };
    const s3Name = `S3 ${load.rate.toLocaleString('en-US')}/s`;
    const got: StoreRuns = { s3: [], held: [] };
    results.set(name, got);
    try {
      for (let r = 1; r <= runs; r++) {
        log(`${name} run ${r}/${runs}: ${s3Name} for ${seconds} s, handlers of ${handlerMs} ms within their ttr and 2x it`);
        got.s3.push(await s3Pair(target, load, r % 2 === 1));
        log(`${name} run ${r}/${runs}: ${held.toLocaleString('en-US')} reservations held, ${heldSeconds} s`);
        got.held.push(await heldPair(target, held, heldTtrMs, heldSeconds));
      }
    } catch (error) {
      // A store that gives out (PostgreSQL's shared max_connections, a timeout) is reported, not fatal to the others.
      got.failed = error instanceof Error ? error.message : String(error);
      log(`${name}: stopped after ${got.held.length} whole run(s): ${got.failed}`);
    } finally {
      await target.cleanup().catch((error: unknown) => log(`${name}: cleanup failed: ${String(error)}`));
    }

    const m = <T>(list: readonly T[], f: (x: T) => number): number => median(list.map(f));
    const sum = <T>(list: readonly T[], f: (x: T) => number): number => list.reduce((n, x) => n + f(x), 0);
    const ms = (x: number): string => x.toFixed(1);
    const { s3: pairs, held: helds } = got;
    const idleCommands = m(helds, (h) => h.idle.serverCommandsPerSec ?? NaN);
    const renewingCommands = m(helds, (h) => h.renewing.serverCommandsPerSec ?? NaN);
    const idleScripts = m(helds, (h) => h.idle.scriptCallsPerSec ?? NaN);
    const renewingScripts = m(helds, (h) => h.renewing.scriptCallsPerSec ?? NaN);
    tables.push({
      title: `renewal cost, ${version}, median of ${runs} run(s)`,
      columns: ['case', 'within its ttr (no renewal)', 'handler 2x its ttr (renewed)', 'against'],
      rows: [
        [
          `${s3Name} for ${seconds} s, 2 s ahead, handler ${handlerMs} ms: lateness p50 / p99 / max, ms`,
          `${ms(m(pairs, (p) => p.within.p50))} / ${ms(m(pairs, (p) => p.within.p99))} / ${ms(m(pairs, (p) => p.within.max))}`,
          `${ms(m(pairs, (p) => p.renewed.p50))} / ${ms(m(pairs, (p) => p.renewed.p99))} / ${ms(m(pairs, (p) => p.renewed.max))}`,
          `p99 ratio ${m(pairs, (p) => p.ratio).toFixed(2)} (runs: ${pairs.map((p) => p.ratio.toFixed(2)).join(', ')})`,
        ],
        [
          'S3: store extend calls/s, reservations extended/s',
          `${m(pairs, (p) => p.within.extendCallsPerSec).toFixed(1)}, ${Math.round(m(pairs, (p) => p.within.extendedPerSec))}`,
          `${m(pairs, (p) => p.renewed.extendCallsPerSec).toFixed(1)}, ${Math.round(m(pairs, (p) => p.renewed.extendedPerSec))}`,
          '',
        ],
        [
          "S3: this process's CPU, cores (user + system; its event loop is one)",
          m(pairs, (p) => p.within.processCores).toFixed(2),
          m(pairs, (p) => p.renewed.processCores).toFixed(2),
          '',
        ],
        [
          'S3: deliveries again / tasks lost / tasks the store did not take in time (sum of runs)',
          `${sum(pairs, (p) => p.within.again)} / ${sum(pairs, (p) => p.within.losses)} / ${sum(pairs, (p) => p.within.unscheduled)}`,
          `${sum(pairs, (p) => p.renewed.again)} / ${sum(pairs, (p) => p.renewed.losses)} / ${sum(pairs, (p) => p.renewed.unscheduled)}`,
          'target 0 / 0 / 0',
        ],
        [
          `${held.toLocaleString('en-US')} held for ${heldSeconds} s: store extend calls/s, reservations extended/s`,
          `${m(helds, (h) => h.idle.extendCallsPerSec).toFixed(2)}, ${Math.round(m(helds, (h) => h.idle.extendedPerSec))}`,
          `${m(helds, (h) => h.renewing.extendCallsPerSec).toFixed(2)}, ${Math.round(m(helds, (h) => h.renewing.extendedPerSec))} (ttr ${heldTtrMs} ms)`,
          `one call per round, not per task: ${Math.round(median(helds.filter((h) => h.renewing.extendCallsPerSec > 0).map((h) => h.renewing.extendedPerSec / h.renewing.extendCallsPerSec))).toLocaleString('en-US')} reservations a call`,
        ],
        [
          `${held.toLocaleString('en-US')} held: this process's CPU, cores (user + system)`,
          m(helds, (h) => h.idle.processCores).toFixed(3),
          m(helds, (h) => h.renewing.processCores).toFixed(3),
          `renewal costs ${Math.round(m(helds, (h) => ((h.renewing.processCores - h.idle.processCores) * 1e6) / h.renewing.extendedPerSec))} µs of CPU per reservation extended`,
        ],
        ...(Number.isNaN(idleCommands)
          ? []
          : [
              [
                `${held.toLocaleString('en-US')} held: Redis script calls/s (requests)`,
                idleScripts.toFixed(1),
                renewingScripts.toFixed(1),
                `renewal adds ${(renewingScripts - idleScripts).toFixed(1)}/s`,
              ],
              [
                `${held.toLocaleString('en-US')} held: Redis commands/s run, inside scripts included`,
                Math.round(idleCommands).toLocaleString('en-US'),
                Math.round(renewingCommands).toLocaleString('en-US'),
                `renewal adds ${Math.round(renewingCommands - idleCommands).toLocaleString('en-US')}/s`,
              ],
            ]),
      ],
      notes: [
        ...(got.failed === undefined ? [] : [`Stopped early: ${got.failed}`]),
        `Lateness = handler start - due time. Within: worker ttr ${handlerMs * 4} ms; renewed: ${Math.round(handlerMs / 2)} ms. Concurrency ${concurrencyFor(load.rate, handlerMs)}. Store calls counted by a Proxy on the port's extend.`,
      ],
    });
    printTable(tables.at(-1)!);
    // After each store, so that one that gives out later does not cost the figures of those before.
    // A run with other settings (--tag) keeps its own file beside the default one.
    const file = writeResults(values.tag === undefined ? 'renewal' : `renewal-${values.tag.replace(/[^a-z0-9-]/gi, '')}`, tables, { runs: Object.fromEntries(results), args: argv });
    console.log(`\nwritten to ${file}`);
  }
}
