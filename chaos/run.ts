/**
 * npm run chaos [-- --short] [-- --rounds N] [-- --load [--load-cpu N] [--load-io N]] [-- <scenario name> ...]
 *
 * Fault scenarios against real processes under load, each judged by the checker
 * (checker.ts): every task whose schedule was acknowledged delivered at least once and
 * never before its runAt, no delivery after an acknowledged ack, duplicates counted and
 * explained by open leases. Prints one table and writes chaos/results/chaos-latest.json
 * (chaos-short-latest.json with --short; -load and -rounds in the name when given). Exits
 * 1 when a scenario breaks a promise it makes.
 *
 * --rounds N   runs the chosen scenarios N times over (round 1: each scenario once, then
 *              round 2 ...) and sums them up per scenario: rounds (failed), tasks
 *              acknowledged, lost, early, acked again, duplicates. A failing round does
 *              not stop the run.
 * --load       adds background load while each scenario runs (load.ts): one CPU spinner
 *              per core and one writer that writes and fsyncs files in a temp dir in a
 *              loop; --load-cpu N / --load-io N set the counts (and imply --load). Started
 *              with the scenario, stopped by PID after it, bounded at LOAD_MAX_MS each.
 *
 * A broken round keeps its files: its directory (the SQLite database with its -wal and
 * -shm, every worker's facts file, verdict.json) moves to chaos/results/kept/, and for
 * each offending task the runner prints where it stands in the store (its row: state,
 * runAt, attempts, parked or not, receipt, reservation; sqlite-rows.ts), so a loss can be
 * told from a fact that went missing. "a master down" reads them from the cluster while it
 * still runs (redis-rows.ts: body, index scores, ready list, the shard's lease), after the
 * drain and again once the workers stopped. CHAOS_WORKER_LOG=1 has each worker log its
 * queue (debug and up) to log-<worker>.log in the round's directory.
 *
 * Every process (workers, delayq serve, redis-server, the load) is started here and
 * stopped by PID, and each PostgreSQL cluster (initdb'd in the round's temp dir, on a free
 * port) by `pg_ctl stop` on its data dir; SIGINT or SIGTERM stops the workers, servers,
 * clusters and load at once, and reports the rounds finished so far.
 * Bounded: the full run takes a few minutes (<= 15) a round, --short (fewer kills,
 * shorter loads, what .ci/run runs) ~3-4 minutes (the PostgreSQL scenarios ~20 s each).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { DelayQClient } from '../src/client/index.js';
import { cli, freePort, redisMissing, startCluster, startRedis, type RedisServer } from '../test/helpers/redis-servers.js';
import { postgresBinariesMissing, startCluster as startPgCluster, type PgCluster } from '../test/helpers/postgres-cluster.js';
import { addLine, check, newFacts, undelivered, type Facts, type Verdict } from './checker.js';
import { appendFacts, FactsTail, openFacts } from '../src/testing/facts-file.js';
import { startLoad, type Load, type LoadSpec } from './load.js';
import { buildKeyspace } from '../src/stores/redis/keys.js';
import { keySlot } from '../src/stores/redis/slot.js';
import { shardOf } from '../src/stores/shared/router.js';
import { owed, standings } from './sqlite-rows.js';
import { redisStandings } from './redis-rows.js';
import { PgProbe } from './postgres-rows.js';
import type { WorkerConfig } from './worker.js';

const ROOT = join(import.meta.dirname, '..');
const RESULTS = join(ROOT, 'chaos', 'results');
/** A scenario takes a minute or two; its load ends by itself well after, should the runner hang. */
const LOAD_MAX_MS = 10 * 60_000;
/** Offending tasks printed with their rows; the kept directory's standings.txt has them all. */
const PRINTED_STANDINGS = 30;

const args = parseArgs({
  allowPositionals: true,
  options: {
    short: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '1' },
    load: { type: 'boolean', default: false },
    'load-cpu': { type: 'string' },
    'load-io': { type: 'string' },
  },
});

function count(name: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} wants a whole number >= ${min}, got "${text}"`);
  return n;
}

const SHORT = args.values.short;
const ONLY = args.positionals;
const ROUNDS = count('rounds', args.values.rounds, 1, 1);
const LOAD: LoadSpec | null =
  args.values.load || args.values['load-cpu'] !== undefined || args.values['load-io'] !== undefined
    ? { cpu: count('load-cpu', args.values['load-cpu'], cpus().length, 0), io: count('load-io', args.values['load-io'], 1, 0) }
    : null;

interface Row extends Verdict {
  readonly name: string;
  readonly faults: string;
  /** 'clean': must lose nothing; 'may-lose': what it loses is what the scenario shows. */
  readonly promise: 'clean' | 'may-lose';
  readonly seconds: number;
  readonly notes: string[];
  /** The round failed before its verdict (a process that would not start, a fault not injected). */
  readonly error?: string;
  readonly round: number;
}

const started = Date.now();
/** Every round's row so far: an interrupted run still reports the rounds it finished. */
const rows: Row[] = [];

// ---------------------------------------------------------------------------------------
// Processes

/** Every worker and server running now, by PID, the load, the PostgreSQL clusters and the rounds' directories: what SIGINT must not leave behind. */
const live = new Set<ChildProcess>();
const loads = new Set<Load>();
const roundDirs = new Set<string>();
/** Started by pg_ctl, in a session of their own: a Ctrl-C reaches them only through here. */
const pgClusters = new Set<PgCluster>();

function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
}

function stopAllNow(): void {
  for (const child of live) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const load of loads) load.killNow();
  // pg_ctl stop -m immediate on each cluster's data dir (synchronous), then its directory goes.
  for (const cluster of pgClusters) cluster.remove();
  for (const dir of roundDirs) rmSync(dir, { recursive: true, force: true });
}

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    console.error(`\nchaos: ${signal}, stopping every process started here`);
    stopAllNow();
    if (rows.length > 0) report(signal);
    process.exit(130);
  });
process.once('exit', stopAllNow);

interface Worker {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<void>;
  signal(signal: NodeJS.Signals): void;
  /** What it wrote to stderr (the first 10 kB). */
  stderr(): string;
}

/** Throws if a worker exited by itself (a crash of the process under test, not a fault injected). */
function assertAlive(workers: readonly Worker[]): void {
  for (const w of workers)
    if (w.child.exitCode !== null || w.child.signalCode !== null)
      throw new Error(`a chaos worker exited by itself (${w.child.exitCode ?? w.child.signalCode}): ${w.stderr()}`);
}

function spawnWorker(config: Omit<WorkerConfig, 'factsFile'>, round: Round): Worker {
  const factsFile = join(round.dir, `facts-${config.idPrefix}.log`);
  // CHAOS_WORKER_LOG=1: each worker's queue logs (debug and up) to log-<idPrefix>.log beside its facts.
  const logFile = process.env['CHAOS_WORKER_LOG'] === '1' ? { logFile: join(round.dir, `log-${config.idPrefix}.log`) } : {};
  round.tails.push({ worker: config.idPrefix, tail: new FactsTail(factsFile) });
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'chaos/worker.ts')], {
    cwd: ROOT,
    env: { ...process.env, CHAOS_WORKER: JSON.stringify({ ...config, factsFile, ...logFile } satisfies WorkerConfig) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => void (stderr.length < 10_000 && (stderr += chunk.toString())));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  round.stderr.set(config.idPrefix, () => stderr);
  const ready = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line === 'R') resolve();
    });
    void exited.then(() => reject(new Error(`chaos worker exited before it was ready: ${stderr}`)));
  });
  ready.catch(() => undefined);
  return {
    child,
    ready,
    exited,
    signal(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    stderr: () => stderr,
  };
}

async function stopWorker(worker: Worker): Promise<void> {
  worker.signal('SIGCONT');
  worker.signal('SIGTERM');
  const timer = setTimeout(() => worker.signal('SIGKILL'), 5_000);
  await worker.exited;
  clearTimeout(timer);
}

interface Server {
  readonly exited: Promise<void>;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** `delayq serve` on a fixed port, so its clients find it again after a restart. */
async function spawnServer(store: string, port: number): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--host', '127.0.0.1', '--port', String(port), '--store', store], {
    cwd: ROOT,
    env: { ...process.env, DELAYQ_TOKEN: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let logs = '';
  child.stderr.on('data', (chunk: Buffer) => void (logs.length < 10_000 && (logs += chunk.toString())));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.includes('"delayq listening"')) resolve();
      else if (logs.length < 10_000) logs += `${line}\n`;
    });
    void exited.then(() => reject(new Error(`delayq serve exited before listening:\n${logs}`)));
  });
  const send = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { exited, kill: () => send('SIGKILL'), stop: () => send('SIGTERM') };
}

// ---------------------------------------------------------------------------------------
// Load, drain, verdict

const base = (store: string, idPrefix: string, extra: Partial<WorkerConfig> = {}): Omit<WorkerConfig, 'factsFile'> => ({
  store,
  idPrefix,
  rate: 150,
  maxDelayMs: 1_500,
  payloadBytes: 64,
  ttrMs: 1_500,
  consumers: 2,
  ...extra,
});

/** One round of one scenario: its facts, and the directory of its files. */
interface Round {
  readonly facts: Facts;
  readonly notes: string[];
  /** Databases and facts files: removed after a clean verdict, kept after a broken one. */
  readonly dir: string;
  /** The SQLite file the scenario's processes share, if it has one. */
  sqlite: string | null;
  /** The PostgreSQL cluster of the round, if it has one: removed after the verdict (a broken round's rows read first). */
  pg: { readonly cluster: PgCluster; readonly probe: PgProbe } | null;
  readonly tails: { readonly worker: string; readonly tail: FactsTail }[];
  /** Each worker's stderr, by idPrefix: written next to the facts of a broken round. */
  readonly stderr: Map<string, () => string>;
  /** Each worker's own facts (by idPrefix), beside the round's: what one process saw. */
  readonly workerFacts: Map<string, Facts>;
  /** A fact the runner saw itself (the HTTP scenario's client), into the facts and facts-runner.log. */
  record(line: string): void;
}

function readFacts(round: Round, last = false): void {
  for (const { worker, tail } of round.tails) {
    let own = round.workerFacts.get(worker);
    if (!own) round.workerFacts.set(worker, (own = newFacts()));
    for (const line of last ? tail.close() : tail.poll()) {
      addLine(round.facts, line);
      addLine(own, line);
    }
  }
}

/**
 * Waits until every acknowledged schedule has been delivered, or nothing new has been
 * delivered for `quietMs` (a task lost never comes), or `maxMs` passed. On SQLite and
 * PostgreSQL a quiet spell ends the wait only if the store owes none of the missing tasks
 * (none is pending or reserved): on a loaded machine a store still working through them
 * (or a shard whose owner died, until its lease runs out) can be quiet that long.
 */
async function drain(round: Round, quietMs = 6_000, maxMs = 60_000): Promise<void> {
  const started = Date.now();
  let seen = -1;
  let since = Date.now();
  let owedSince: number | null = null;
  for (;;) {
    await sleep(250);
    readFacts(round);
    const missing = undelivered(round.facts);
    if (missing.length === 0) {
      // The last deliveries' acks land.
      await sleep(500);
      readFacts(round);
      break;
    }
    if (round.facts.deliveries.length !== seen) {
      seen = round.facts.deliveries.length;
      since = Date.now();
    }
    if (Date.now() - started > maxMs) break;
    if (Date.now() - since <= quietMs) continue;
    const stillOwed = round.sqlite !== null ? owed(round.sqlite, missing) : round.pg !== null ? await round.pg.probe.owed(missing) : null;
    if (stillOwed === null || stillOwed === 0) break;
    owedSince ??= since + quietMs;
    // Asked again in a second, not every 250 ms.
    since = Date.now() - quietMs + 1_000;
  }
  if (owedSince !== null) round.notes.push(`the drain waited ${((Date.now() - owedSince) / 1000).toFixed(1)} s past its quiet spell for tasks the store still owed`);
}

/** Which scenario and round is running: names the directory a broken round is kept in. */
const current = { key: '', round: 0 };

async function scenario(
  name: string,
  faults: string,
  promise: Row['promise'],
  body: (round: Round) => Promise<void>,
): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), `delayq-chaos-${current.key}-`));
  roundDirs.add(dir);
  let runnerFacts: number | null = null;
  const round: Round = {
    facts: newFacts(),
    notes: [],
    dir,
    sqlite: null,
    pg: null,
    tails: [],
    stderr: new Map(),
    workerFacts: new Map(),
    record(line) {
      addLine(this.facts, line);
      appendFacts((runnerFacts ??= openFacts(join(dir, 'facts-runner.log'))), `${line}\n`);
    },
  };
  const roundStarted = Date.now();
  console.log(`\n# ${name}${ROUNDS > 1 ? ` (round ${current.round}/${ROUNDS})` : ''}: ${faults}`);
  let row: Row;
  try {
    await body(round);
    readFacts(round, true);
    const verdict = check(round.facts);
    row = { name, faults, promise, round: current.round, seconds: Math.round((Date.now() - roundStarted) / 1000), notes: round.notes, ...verdict };
  } catch (error) {
    // Rounds run one at a time: whatever still runs is this round's, and must not run into the next.
    await Promise.all([...live].map((child) => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGKILL')))));
    readFacts(round, true);
    row = { name, faults, promise, round: current.round, seconds: Math.round((Date.now() - roundStarted) / 1000), notes: round.notes, error: String(error), ...check(round.facts) };
  }
  const { facts, notes } = round;
  // The facts behind each offending id, for the report.
  const offending = new Set([...row.examples.lost, ...row.examples.early, ...row.examples.ackedAgain, ...row.examples.unexplained]);
  for (const id of offending)
    notes.push(
      `${id}: scheduled runAt ${facts.scheduled.get(id) ?? '-'}; delivered ${JSON.stringify(facts.deliveries.filter((d) => d.id === id))}; acked ${JSON.stringify(facts.acks.filter((a) => a.id === id))}`,
    );
  console.log(
    `  scheduled ${row.scheduled}, delivered ${row.delivered}, lost ${row.lost}, early ${row.early}, acked-again ${row.ackedAgain}, ` +
      `duplicates ${row.duplicates} (unexplained ${row.unexplainedDuplicates}), max lateness ${row.maxLatenessMs} ms, ${row.seconds} s`,
  );
  if (runnerFacts !== null) closeSync(runnerFacts);
  try {
    if (failures(row).length > 0) await keep(round, row);
    else rmSync(dir, { recursive: true, force: true });
  } finally {
    if (round.pg !== null) {
      await round.pg.probe.close();
      round.pg.cluster.remove();
      pgClusters.delete(round.pg.cluster);
    }
  }
  roundDirs.delete(dir);
  for (const note of notes) console.log(`  ${note}`);
  return row;
}

/**
 * Moves a broken round's directory to chaos/results/kept/, with its verdict and, on SQLite
 * and PostgreSQL, the standing of every offending task in the store (every lost one, the
 * examples of the rest), and the PostgreSQL server's log.
 */
async function keep(round: Round, row: Row): Promise<void> {
  const checkedAt = Date.now();
  const lost = undelivered(round.facts);
  const ids = [...new Set([...lost, ...row.examples.early, ...row.examples.ackedAgain, ...row.examples.unexplained])];
  writeFileSync(join(round.dir, 'verdict.json'), `${JSON.stringify({ ...row, lostIds: lost, checkedAt }, null, 2)}\n`);
  for (const [worker, stderr] of round.stderr) if (stderr() !== '') writeFileSync(join(round.dir, `stderr-${worker}.log`), stderr());
  if (round.sqlite !== null && existsSync(round.sqlite) && ids.length > 0) {
    try {
      const rows = standings(round.sqlite, ids, checkedAt);
      const lines = rows.map((r) => `${r.id}: ${r.reading}; row ${JSON.stringify(r.row)}`);
      writeFileSync(join(round.dir, 'standings.txt'), `${lines.join('\n')}\n`);
      const byReading = new Map<string, number>();
      for (const r of rows) {
        const kind = r.row === null ? 'no row' : r.row.park_bucket !== null ? `${r.row.state}, parked` : r.row.state;
        byReading.set(kind, (byReading.get(kind) ?? 0) + 1);
      }
      round.notes.push(`in the store: ${[...byReading].map(([kind, n]) => `${n} ${kind}`).join(', ')}`);
      for (const line of lines.slice(0, PRINTED_STANDINGS)) round.notes.push(line);
      if (lines.length > PRINTED_STANDINGS) round.notes.push(`... and ${lines.length - PRINTED_STANDINGS} more in standings.txt`);
    } catch (error) {
      round.notes.push(`could not read the offending tasks' rows: ${String(error)}`);
    }
  }
  if (round.pg !== null) {
    if (existsSync(join(round.pg.cluster.dir, 'log'))) cpSync(join(round.pg.cluster.dir, 'log'), join(round.dir, 'postgres.log'));
    if (ids.length > 0 && round.pg.cluster.running())
      try {
        const rows = await round.pg.probe.standings(ids, checkedAt);
        const lines = rows.map((r) => `${r.id}: ${r.reading}; row ${JSON.stringify(r.row)}`);
        writeFileSync(join(round.dir, 'standings.txt'), `${lines.join('\n')}\n`);
        const byReading = new Map<string, number>();
        for (const r of rows) byReading.set(r.row === null ? 'no row' : r.row.state, (byReading.get(r.row === null ? 'no row' : r.row.state) ?? 0) + 1);
        round.notes.push(`in the store: ${[...byReading].map(([kind, n]) => `${n} ${kind}`).join(', ')}`);
        for (const line of lines.slice(0, PRINTED_STANDINGS)) round.notes.push(line);
        if (lines.length > PRINTED_STANDINGS) round.notes.push(`... and ${lines.length - PRINTED_STANDINGS} more in standings.txt`);
      } catch (error) {
        round.notes.push(`could not read the offending tasks' rows: ${String(error)}`);
      }
  }
  const kept = join(RESULTS, 'kept', `${new Date(checkedAt).toISOString().replace(/[:.]/g, '-')}-${current.key}-r${current.round}`);
  mkdirSync(kept, { recursive: true });
  // Copied, not renamed: the temp dir is often on another file system.
  cpSync(round.dir, kept, { recursive: true });
  rmSync(round.dir, { recursive: true, force: true });
  round.notes.push(`kept: ${relative(ROOT, kept)}`);
}

const pick = (low: number, high: number): number => low + Math.random() * (high - low);

// ---------------------------------------------------------------------------------------
// Scenarios

async function sqliteKills(kills: number): Promise<Row> {
  return scenario('sqlite: SIGKILL', `the one process SIGKILLed ${kills}x under load`, 'clean', async (round) => {
    round.sqlite = join(round.dir, 'q.db');
    const store = `sqlite:${round.sqlite}`;
    for (let k = 0; k < kills; k++) {
      const worker = spawnWorker(base(store, `s${k}`), round);
      await worker.ready;
      await sleep(pick(600, 1_500));
      worker.signal('SIGKILL');
      await worker.exited;
    }
    const last = spawnWorker(base(store, 'last', { rate: 0 }), round);
    await last.ready;
    await drain(round);
    await stopWorker(last);
  });
}

async function httpKills(kills: number): Promise<Row> {
  return scenario('http: server SIGKILL', `delayq serve (SQLite) SIGKILLed ${kills}x under HTTP load (POST + reserve + ack)`, 'clean', async (round) => {
    round.sqlite = join(round.dir, 'q.db');
    const store = `sqlite:${round.sqlite}`;
    const port = await freePort();
    const client = new DelayQClient({ url: `http://127.0.0.1:${port}`, timeoutMs: 5_000 });
    let server = await spawnServer(store, port);
    let running = true;
    let producing = true;
    const producer = (async () => {
      let n = 0;
      while (producing) {
        const tasks = Array.from({ length: 8 }, () => ({
          id: `h-${n++}`,
          topic: 'chaos',
          payload: { n },
          runAt: Date.now() + Math.floor(Math.random() * 1_500),
          ttrMs: 1_500,
          maxAttempts: 1_000,
        }));
        for (;;) {
          try {
            const results = await client.scheduleMany(tasks);
            for (let i = 0; i < tasks.length; i++) if (!('error' in results[i]!)) round.record(`S ${tasks[i]!.id} ${tasks[i]!.runAt}`);
            break;
          } catch {
            if (!producing) break;
            await sleep(100);
          }
        }
        await sleep(50);
      }
    })();
    const consumer = async (): Promise<void> => {
      while (running) {
        let batch;
        try {
          batch = await client.reserve('chaos', { max: 20, waitMs: 300 });
        } catch {
          await sleep(100);
          continue;
        }
        if (batch.length === 0) continue;
        for (const d of batch) round.record(`D ${d.id} ${d.attempt} ${d.reservedUntil - 1_500}`);
        for (let tries = 0; tries < 20 && running; tries++) {
          try {
            const outcomes = await client.ackMany(batch);
            const done = Date.now();
            batch.forEach((d, i) => outcomes[i] === 'acked' && round.record(`A ${d.id} ${d.attempt} ${done}`));
            break;
          } catch {
            await sleep(100);
          }
        }
      }
    };
    const consumers = [consumer(), consumer()];
    try {
      for (let k = 0; k < kills; k++) {
        await sleep(pick(800, 1_600));
        await server.kill();
        server = await spawnServer(store, port);
      }
      await sleep(1_000);
      producing = false;
      await producer;
      await drain(round);
    } finally {
      running = false;
      producing = false;
      await Promise.all([producer, ...consumers]);
      await server.stop();
    }
  });
}

async function withRedis<T>(options: Parameters<typeof startRedis>[0], body: (redis: RedisServer) => Promise<T>): Promise<T> {
  const redis = await startRedis(options);
  try {
    return await body(redis);
  } finally {
    await redis.stop();
    redis.remove();
  }
}

async function runWorkers(workers: Worker[], round: Round, loadMs: number): Promise<void> {
  await sleep(loadMs);
  for (const w of workers) w.signal('SIGUSR2');
  await drain(round);
  await Promise.all(workers.map(stopWorker));
}

async function redisOwnerKill(): Promise<Row> {
  return scenario('redis: owner SIGKILL', 'one of 3 processes SIGKILLed; its shards taken over when its lease (5 s) runs out', 'clean', (round) =>
    withRedis({ appendonly: true }, async (redis) => {
      const store = `${redis.url}?prefix=own&shards=16`;
      const workers = [0, 1, 2].map((i) => spawnWorker(base(store, `o${i}`, { rate: 100 }), round));
      await Promise.all(workers.map((w) => w.ready));
      await sleep(SHORT ? 2_000 : 4_000);
      workers[0]!.signal('SIGKILL');
      await runWorkers(workers.slice(1), round, SHORT ? 7_000 : 10_000);
    }),
  );
}

/** The limited topic's rate in the flow-limit scenario, per second, and its burst. */
const FLOW_RATE = 100;
const FLOW_BURST = 20;
/** The lag between an admission and its consumer's answer a span may show over its tokens (flowWindows). */
const FLOW_LAG_MS = 500;
/** How far off FLOW_RATE a judged 1 s window may be. */
const FLOW_TOLERANCE = 0.1;

/**
 * Three processes on one Redis, one topic limited to FLOW_RATE/s (burst FLOW_BURST,
 * concurrency 50), a backlog due well above that rate; one process SIGKILLed. Beside the
 * checker's promises, the delivered rate in 1 s windows (deliveries by the time their
 * consumer had them, duplicates included: each took a token): every window whose topic had a backlog of
 * at least FLOW_RATE due at its end, from the takeover of the dead process's shards on,
 * within FLOW_TOLERANCE of FLOW_RATE; no 1 s span from then on (sliding) over burst + rate;
 * and over the whole run no span over burst + rate * span by more than FLOW_LAG_MS of rate.
 * The takeover (every shard leased by a live process again, read from the lease keys) is
 * reported and left out of the judged windows.
 */
async function redisFlowLimit(): Promise<Row> {
  const name = 'redis: flow limit, owner SIGKILL';
  const faults = `one topic limited to ${FLOW_RATE}/s (burst ${FLOW_BURST}) under a backlog, 3 processes; one SIGKILLed`;
  return scenario(name, faults, 'clean', (round) =>
    // No AOF: the fault is a process, and an fsync per write on a busy disk stalls every consumer at once.
    withRedis({}, async (redis) => {
      const prefix = 'fl';
      const shards = 16;
      const store = `${redis.url}?prefix=${prefix}&shards=${shards}`;
      const limits = { rate: FLOW_RATE, burst: FLOW_BURST, concurrency: 50 };
      // 3 x 80/s scheduled, due within 1.5 s: a backlog that grows by ~140/s, ~60/s after the
      // kill (less on a loaded machine), drained at the limit once producing stops.
      const workers = [0, 1, 2].map((i) => spawnWorker(base(store, `f${i}`, { rate: 80, consumers: 4, topic: 'limited', limits }), round));
      await Promise.all(workers.map((w) => w.ready));
      const startedAt = Date.now();
      const leases = buildKeyspace(prefix, shards).shards.map((s) => s.lease);
      const owners = (): (string | null)[] =>
        cli(redis.port, 'MGET', ...leases)
          .split('\n')
          .slice(0, shards)
          .map((v) => (v.trim() === '' ? null : v.trim().split(':')[0]!));
      await sleep(SHORT ? 4_000 : 8_000);
      const before = new Set(owners());
      const killedAt = Date.now();
      workers[0]!.signal('SIGKILL');
      // The lease holders every 100 ms until the run ends: the takeover is read from them afterwards.
      const seen: { at: number; owners: (string | null)[] }[] = [];
      let polling = true;
      const poller = (async () => {
        while (polling) {
          seen.push({ at: Date.now(), owners: owners() });
          await sleep(100);
        }
      })();
      const live = workers.slice(1);
      await sleep(SHORT ? 9_000 : 22_000);
      for (const w of live) w.signal('SIGUSR2');
      await drain(round);
      // Read before the workers stop: a worker that stops gives its leases up.
      polling = false;
      await poller;
      await Promise.all(live.map(stopWorker));
      const alive = new Set(seen.at(-1)?.owners ?? []);
      const dead = [...before].filter((o) => o !== null && !alive.has(o));
      const takeoverAt = seen.find((s) => s.owners.every((o) => o !== null && !dead.includes(o)))?.at ?? null;
      readFacts(round);
      const verdict = flowWindows(round.facts, { from: startedAt, killedAt, takeoverAt, rate: FLOW_RATE, burst: FLOW_BURST });
      round.notes.push(...verdict.notes);
      if (dead.length !== 1) throw new Error(`expected the killed process to have held shards under one lease owner, found ${dead.length} (${before.size} owners before the kill)`);
      if (takeoverAt === null) throw new Error('the dead process\'s shards were never taken over');
      if (verdict.problem !== null) throw new Error(verdict.problem);
    }),
  );
}

/**
 * The flow-limit scenario's rate judgement over the facts: 1 s windows from `from`, each
 * with its deliveries (by reservation time) and the backlog due at its end (acknowledged,
 * runAt passed, not yet delivered).
 */
function flowWindows(
  facts: Facts,
  { from, killedAt, takeoverAt, rate, burst }: { from: number; killedAt: number; takeoverAt: number | null; rate: number; burst: number },
): { notes: string[]; problem: string | null } {
  // When each consumer had its delivery: a reservation may be made ahead of its admission
  // (the Redis store's prefetch keeps a surplus up to 100 ms for the next call, ADR 0007).
  const gotOf = (d: Facts['deliveries'][number]): number => d.got ?? d.at;
  const times = facts.deliveries.map(gotOf).sort((a, b) => a - b);
  const first = new Map<string, number>();
  for (const d of facts.deliveries) if (!first.has(d.id) || gotOf(d) < first.get(d.id)!) first.set(d.id, gotOf(d));
  const last = times.at(-1) ?? from;
  const windows: { start: number; delivered: number; backlog: number }[] = [];
  for (let start = from; start + 1_000 <= last; start += 1_000) {
    const end = start + 1_000;
    let delivered = 0;
    for (const t of times) if (t >= start && t < end) delivered++;
    let backlog = 0;
    for (const [id, runAt] of facts.scheduled) if (runAt < end && (first.get(id) ?? Infinity) >= end) backlog++;
    windows.push({ start, delivered, backlog });
  }
  // Any 1 s span from the takeover on, sliding: the most deliveries in it.
  const steady = takeoverAt === null ? [] : times.filter((t) => t >= takeoverAt);
  let maxSpan = 0;
  for (let i = 0, j = 0; i < steady.length; i++) {
    while (steady[i]! - steady[j]! >= 1_000) j++;
    maxSpan = Math.max(maxSpan, i - j + 1);
  }
  // Over the whole run, spans of any length: the most deliveries past burst + rate * span. A
  // consumer has its delivery a little after the admission (more so while processes start,
  // or the machine is busy), so a span can gather a little more than its own tokens: the
  // excess, in ms of the rate, is that lag; a limit that does not hold grows it without bound.
  let excess = 0;
  let lowest = Infinity;
  times.forEach((t, k) => {
    const f = k - (rate * t) / 1_000;
    lowest = Math.min(lowest, f - 1);
    excess = Math.max(excess, f - lowest - burst);
  });
  const lagMs = Math.round((excess / rate) * 1_000);
  const low = rate * (1 - FLOW_TOLERANCE);
  const high = rate * (1 + FLOW_TOLERANCE);
  const judged = takeoverAt === null ? [] : windows.filter((w) => w.start >= takeoverAt && w.backlog >= rate);
  const off = judged.filter((w) => w.delivered < low || w.delivered > high);
  const during = windows.filter((w) => w.start + 1_000 > killedAt && (takeoverAt === null || w.start < takeoverAt));
  const rates = (ws: typeof windows): string => (ws.length === 0 ? '-' : ws.map((w) => w.delivered).join(' '));
  const mean = judged.length === 0 ? 0 : judged.reduce((n, w) => n + w.delivered, 0) / judged.length;
  const notes = [
    `takeover ${takeoverAt === null ? 'never seen' : `${((takeoverAt - killedAt) / 1000).toFixed(1)} s after the kill`}; windows (deliveries/s) before it: ${rates(windows.filter((w) => w.start + 1_000 <= killedAt))}; across it: ${rates(during)}`,
    `judged ${judged.length} windows after the takeover with >= ${rate} due: ${rates(judged)} (mean ${mean.toFixed(1)}/s, min ${Math.min(...judged.map((w) => w.delivered))}, max ${Math.max(...judged.map((w) => w.delivered))}); most in any 1 s span from the takeover on ${maxSpan} (cap burst + rate = ${burst + rate})`,
    `whole run: the most past burst + rate * span in any span ${Math.ceil(excess)} deliveries (${lagMs} ms of lag between admission and consumer; allowed ${FLOW_LAG_MS})`,
  ];
  let problem: string | null = null;
  if (judged.length < 5) problem = `only ${judged.length} windows could be judged (a backlog of >= ${rate} due after the takeover)`;
  else if (off.length > 0) problem = `${off.length} of ${judged.length} windows off ${rate}/s by more than ${FLOW_TOLERANCE * 100}%: ${rates(off)}`;
  else if (maxSpan > burst + rate) problem = `${maxSpan} deliveries in a 1 s span, over burst + rate = ${burst + rate}`;
  else if (lagMs > FLOW_LAG_MS) problem = `${Math.ceil(excess)} deliveries in a span past burst + rate * span: more than ${FLOW_LAG_MS} ms of lag explains`;
  return { notes, problem };
}

async function redisOwnerStop(): Promise<Row> {
  return scenario('redis: owner SIGSTOP', 'one of 3 processes frozen (SIGSTOP) 7 s, past its 5 s lease, then SIGCONT', 'clean', (round) =>
    withRedis({ appendonly: true }, async (redis) => {
      const store = `${redis.url}?prefix=stp&shards=16`;
      const workers = [0, 1, 2].map((i) => spawnWorker(base(store, `p${i}`, { rate: 100 }), round));
      await Promise.all(workers.map((w) => w.ready));
      await sleep(SHORT ? 2_000 : 4_000);
      workers[0]!.signal('SIGSTOP');
      await sleep(7_000);
      workers[0]!.signal('SIGCONT');
      await runWorkers(workers, round, SHORT ? 3_000 : 6_000);
    }),
  );
}

async function redisServerKill(): Promise<Row> {
  return scenario('redis: redis-server SIGKILL', 'redis-server (AOF, appendfsync always) SIGKILLed and restarted on its data', 'clean', async (round) => {
    let redis = await startRedis({ appendonly: true });
    const { port, dir } = redis;
    try {
      const store = `${redis.url}?prefix=rk&shards=16`;
      const workers = [0, 1].map((i) => spawnWorker(base(store, `k${i}`, { rate: 150 }), round));
      await Promise.all(workers.map((w) => w.ready));
      const kills = SHORT ? 1 : 2;
      for (let k = 0; k < kills; k++) {
        await sleep(SHORT ? 2_500 : 4_000);
        await redis.kill();
        await sleep(1_000);
        redis = await startRedis({ appendonly: true, port, dir });
      }
      await runWorkers(workers, round, 3_000);
    } finally {
      await redis.stop();
      redis.remove();
    }
  });
}

/** Notes every call the round's workers saw rejected; a problem when one was rejected with another code than STORE_UNAVAILABLE. */
function rejectionProblems(round: Round): string[] {
  const all = [...round.workerFacts.values()].flatMap((f) => f.errors);
  round.notes.push(`rejected calls: ${errorSummary(all)}`);
  const wrong = all.filter((e) => e.code !== 'STORE_UNAVAILABLE');
  return wrong.length === 0 ? [] : [`${wrong.length} calls rejected with another code than STORE_UNAVAILABLE: ${errorSummary(wrong)}`];
}

/**
 * redis-server frozen (SIGSTOP): its connections stay open and nothing answers, so only the
 * store's callTimeoutMs (1 s here) fails the calls made meanwhile; commands in flight run
 * when it wakes (a reserve then holds its tasks until their ttr runs out).
 */
async function redisServerStop(): Promise<Row> {
  const stopMs = 3_000;
  return scenario('redis: redis-server SIGSTOP', `redis-server frozen (SIGSTOP) ${stopMs / 1000} s, past the store's callTimeoutMs (1 s), then SIGCONT`, 'clean', async (round) => {
    const redis = await startRedis({ appendonly: true });
    try {
      const store = `${redis.url}?prefix=rs&shards=16&callTimeoutMs=1000`;
      const workers = [0, 1].map((i) => spawnWorker(base(store, `f${i}`, { rate: 150 }), round));
      await Promise.all(workers.map((w) => w.ready));
      const stops = SHORT ? 1 : 2;
      const windows: { from: number; to: number }[] = [];
      for (let k = 0; k < stops; k++) {
        await sleep(SHORT ? 2_500 : 4_000);
        const from = Date.now();
        redis.pause();
        await sleep(stopMs);
        redis.resume();
        windows.push({ from, to: Date.now() });
      }
      await sleep(2_000);
      assertAlive(workers);
      readFacts(round);
      // Each producer was refused while the server was frozen, each refusal within about the
      // timeout, and with STORE_UNAVAILABLE: the calls failed instead of hanging.
      const problems = rejectionProblems(round);
      for (const [i, w] of windows.entries())
        for (const name of ['f0', 'f1']) {
          const frozen = round.workerFacts.get(name)!.errors.filter((e) => e.op === 'schedule' && e.at >= w.from && e.at <= w.to + 1_000);
          const slowest = Math.max(0, ...frozen.map((e) => e.ms));
          round.notes.push(`stop ${i + 1}, ${name}: ${frozen.length} schedule calls rejected while frozen, slowest ${slowest} ms`);
          if (frozen.length === 0) problems.push(`stop ${i + 1}: ${name}'s producer saw no rejection while the server was frozen (a hang?)`);
          if (slowest > 2_500) problems.push(`stop ${i + 1}: a schedule call of ${name} took ${slowest} ms to reject (callTimeoutMs is 1,000)`);
        }
      if (problems.length > 0) throw new Error(problems.join('; '));
      await runWorkers(workers, round, 3_000);
    } finally {
      redis.resume();
      await redis.stop();
      redis.remove();
    }
  });
}

/** A cluster of 3 masters with a replica each; the victim is the first master, `replica` its replica. */
async function clusterWithVictim(): Promise<{ cluster: Awaited<ReturnType<typeof startCluster>>; servers: RedisServer[]; victim: RedisServer; replica: RedisServer }> {
  const cluster = await startCluster(3, 1);
  const servers = [...cluster.servers];
  const victim = servers[0]!;
  const replica = servers.find((s) => cli(s.port, 'INFO', 'replication').includes(`master_port:${victim.port}`));
  if (!replica) {
    await cluster.stop();
    throw new Error('no replica of the first master');
  }
  return { cluster, servers, victim, replica };
}

async function clusterFailover(waitReplicas: 0 | 1): Promise<Row> {
  const name = waitReplicas === 0 ? 'redis cluster: failover' : 'redis cluster: failover, waitReplicas=1';
  const faults = '3 masters + 3 replicas; a replica lags 1.5 s (SIGSTOP), then its master is SIGKILLed and the replica takes over';
  return scenario(name, faults, waitReplicas === 0 ? 'may-lose' : 'clean', async (round) => {
    const { cluster, servers, victim, replica } = await clusterWithVictim();
    try {
      const store = `${cluster.url}?prefix=cf${waitReplicas}&shards=16${waitReplicas ? `&waitReplicas=1&waitTimeoutMs=500` : ''}`;
      // Large payloads, so the replica's lag is more than the socket buffers hold.
      const workers = [0, 1].map((i) => spawnWorker(base(store, `c${i}`, { rate: 150, payloadBytes: 16 * 1024, ttrMs: 3_000 }), round));
      await Promise.all(workers.map((w) => w.ready));
      await sleep(SHORT ? 2_000 : 4_000);
      replica.pause();
      await sleep(1_500);
      const killedAt = Date.now();
      await victim.kill();
      replica.resume();
      const deadline = Date.now() + 30_000;
      while (!cli(replica.port, 'INFO', 'replication').includes('role:master')) {
        if (Date.now() > deadline) throw new Error('the replica did not take over in 30 s');
        await sleep(50);
      }
      round.notes.push(`replica promoted ${((Date.now() - killedAt) / 1000).toFixed(1)} s after its master was killed`);
      // The old master comes back as a replica of the new one (so waitReplicas=1 can be met again).
      servers[0] = await startRedis({ cluster: true, port: victim.port, dir: victim.dir });
      await runWorkers(workers, round, SHORT ? 3_000 : 6_000);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      for (const s of servers) s.remove();
    }
  });
}

/** The slot ranges a cluster node serves as master, read from its own CLUSTER NODES line. */
function slotRanges(port: number): [number, number][] {
  const line = cli(port, 'CLUSTER', 'NODES').split('\n').find((l) => l.includes('myself'));
  if (!line) throw new Error(`node ${port} did not list itself in CLUSTER NODES`);
  return line
    .trim()
    .split(' ')
    .slice(8)
    .filter((f) => /^\d+(-\d+)?$/.test(f))
    .map((f) => {
      const [low, high] = f.split('-').map(Number);
      return [low!, high ?? low!];
    });
}

/**
 * A master of a 3-master cluster under waitReplicas=1 SIGKILLed and left down: its replica
 * takes over, and, with no replica of its own, cannot acknowledge a write. The shards on the
 * two healthy masters must keep flowing (90% of their tasks due while it is down delivered
 * within 10 s of runAt); the degraded shards' writes answer STORE_UNAVAILABLE; once the old
 * master is back as a replica, everything acknowledged is delivered.
 */
async function clusterMasterDown(): Promise<Row> {
  const name = 'redis cluster: a master down, waitReplicas=1';
  const downMs = SHORT ? 20_000 : 30_000;
  const faults = `3 masters + 3 replicas, waitReplicas=1; a master SIGKILLed and left down ${downMs / 1000} s (its promoted replica has no replica), then back as a replica`;
  return scenario(name, faults, 'clean', async (round) => {
    const { cluster, servers, victim, replica } = await clusterWithVictim();
    try {
      const prefix = 'md';
      const shards = 16;
      const ranges = slotRanges(victim.port);
      const keyspace = buildKeyspace(prefix, shards);
      const degraded = new Set(
        keyspace.shards.filter((s) => ranges.some(([low, high]) => keySlot(s.pool) >= low && keySlot(s.pool) <= high)).map((s) => s.index),
      );
      if (degraded.size === 0 || degraded.size === shards) throw new Error(`the victim holds ${degraded.size} of ${shards} shards`);
      const store = `${cluster.url}?prefix=${prefix}&shards=${shards}&waitReplicas=1&waitTimeoutMs=500`;
      const workers = [0, 1].map((i) => spawnWorker(base(store, `m${i}`, { rate: 150, ttrMs: 3_000 }), round));
      await Promise.all(workers.map((w) => w.ready));
      await sleep(SHORT ? 2_000 : 4_000);
      const killedAt = Date.now();
      await victim.kill();
      const deadline = Date.now() + 30_000;
      while (!cli(replica.port, 'INFO', 'replication').includes('role:master')) {
        if (Date.now() > deadline) throw new Error('the replica did not take over in 30 s');
        await sleep(50);
      }
      round.notes.push(`replica promoted ${((Date.now() - killedAt) / 1000).toFixed(1)} s after its master was killed; ${degraded.size} of ${shards} shards on it`);
      await sleep(Math.max(0, killedAt + downMs - Date.now()));
      const backAt = Date.now();
      readFacts(round, false);
      // Tasks of healthy shards due while the master was down, far enough before its return to be judged.
      const judged = [...round.facts.scheduled].filter(([id, runAt]) => runAt >= killedAt && runAt <= backAt - 10_000 && !degraded.has(shardOf(id, shards)));
      const firstDelivery = new Map<string, number>();
      for (const d of round.facts.deliveries) if (!firstDelivery.has(d.id) || d.at < firstDelivery.get(d.id)!) firstDelivery.set(d.id, d.at);
      const onTime = judged.filter(([id, runAt]) => (firstDelivery.get(id) ?? Infinity) <= runAt + 10_000).length;
      const lateness = judged.map(([id, runAt]) => (firstDelivery.get(id) ?? Infinity) - runAt).sort((a, b) => a - b);
      const at = (q: number): string => (lateness.length === 0 ? '-' : `${lateness[Math.min(lateness.length - 1, Math.floor(q * lateness.length))]} ms`);
      const degradedScheduled = [...round.facts.scheduled].filter(([id, runAt]) => runAt >= killedAt + 5_000 && degraded.has(shardOf(id, shards))).length;
      round.notes.push(
        `while it was down: ${onTime} of ${judged.length} healthy-shard tasks delivered within 10 s of runAt (lateness p50 ${at(0.5)}, p99 ${at(0.99)}); ${degradedScheduled} degraded-shard schedules acknowledged from 5 s after the kill`,
      );
      if (judged.length === 0) throw new Error('no healthy-shard task fell due while the master was down');
      if (onTime < 0.9 * judged.length) throw new Error(`only ${onTime} of ${judged.length} healthy-shard tasks were delivered within 10 s while a master was down`);
      if (degradedScheduled > 0) throw new Error(`${degradedScheduled} schedules into degraded shards were acknowledged although their master had no replica`);
      servers[0] = await startRedis({ cluster: true, port: victim.port, dir: victim.dir });
      round.notes.push(`the old master back as a replica ${((Date.now() - backAt) / 1000).toFixed(1)} s after ${downMs / 1000} s down`);
      await sleep(SHORT ? 3_000 : 6_000);
      for (const w of workers) w.signal('SIGUSR2');
      await drain(round);
      // Still undelivered after the drain: where they stand, while the workers still run, and after they stopped.
      const nodes = servers.map((s) => ({ host: '127.0.0.1', port: s.port }));
      const missing = undelivered(round.facts);
      const before = missing.length === 0 ? [] : await redisStandings(nodes, true, prefix, shards, missing).catch((error: unknown) => [{ id: '-', reading: String(error) }]);
      await Promise.all(workers.map(stopWorker));
      readFacts(round);
      const still = undelivered(round.facts);
      const after = still.length === 0 ? [] : await redisStandings(nodes, true, prefix, shards, still).catch((error: unknown) => [{ id: '-', reading: String(error) }]);
      const lines = [...before.map((r) => `after the drain: ${r.id}: ${r.reading}`), ...after.map((r) => `after the workers stopped: ${r.id}: ${r.reading}`)];
      if (lines.length > 0) {
        writeFileSync(join(round.dir, 'standings.txt'), `killed at ${killedAt}, back at ${backAt}\n${lines.join('\n')}\n`);
        round.notes.push(`killed at ${killedAt}, back at ${backAt}`, ...lines.slice(0, PRINTED_STANDINGS));
      }
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      for (const s of servers) s.remove();
    }
  });
}

// ---------------------------------------------------------------------------------------
// PostgreSQL: each round on a cluster of its own (initdb + pg_ctl on a free port, in the
// round's temp dir; test/helpers/postgres-cluster.ts), never the machine's server.

const PG_SCHEMA = 'chaos';

/** Starts the round's cluster; scenario() removes it after the verdict, SIGINT at once. */
async function withPostgres(round: Round, body: (cluster: PgCluster, store: string) => Promise<void>): Promise<void> {
  const cluster = await startPgCluster();
  pgClusters.add(cluster);
  round.pg = { cluster, probe: new PgProbe(cluster.url, PG_SCHEMA) };
  await body(cluster, `${cluster.url}?schema=${PG_SCHEMA}`);
}

/** The p-th quantile of sorted numbers, as text. */
function quantile(sorted: readonly number[], q: number): string {
  return sorted.length === 0 ? '-' : `${sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]} ms`;
}

/** The first delivery of each task. */
function firstDeliveries(facts: Facts): Map<string, number> {
  const first = new Map<string, number>();
  for (const d of facts.deliveries) if (!first.has(d.id) || d.at < first.get(d.id)!) first.set(d.id, d.at);
  return first;
}

/** Rejected calls counted by op and code, for a note: "schedule STORE_UNAVAILABLE x40, ...". */
function errorSummary(errors: Facts['errors']): string {
  const counts = new Map<string, number>();
  for (const e of errors) counts.set(`${e.op} ${e.code}`, (counts.get(`${e.op} ${e.code}`) ?? 0) + 1);
  return counts.size === 0 ? 'none' : [...counts].map(([k, n]) => `${k} x${n}`).join(', ');
}

/**
 * The lone delayq process SIGKILLed under load and started again, `kills` times: each new
 * process finds the shards leased to its dead predecessor until the lease runs out (4 s),
 * and the reservations it held, which the new owner expires.
 */
async function pgKills(kills: number): Promise<Row> {
  return scenario('postgres: SIGKILL', `the one process SIGKILLed ${kills}x under load and started again (its shards' leases run out first)`, 'clean', (round) =>
    withPostgres(round, async (_cluster, store) => {
      for (let k = 0; k < kills; k++) {
        const worker = spawnWorker(base(store, `g${k}`), round);
        await worker.ready;
        await sleep(pick(1_000, 2_500));
        assertAlive([worker]);
        worker.signal('SIGKILL');
        await worker.exited;
      }
      const last = spawnWorker(base(store, 'last', { rate: 0 }), round);
      await last.ready;
      await drain(round);
      assertAlive([last]);
      await stopWorker(last);
    }),
  );
}

/**
 * `pg_ctl stop -m immediate` under load (a crash: no checkpoint, every connection cut),
 * down `downMs`, then started again on its port and data dir, `crashes` times, while two
 * delayq processes run on: neither is restarted. Beyond the checker, it asserts what the
 * processes' callers saw: while the server was down every rejected call rejected with
 * STORE_UNAVAILABLE, each producer kept being answered (rejected within seconds, the last
 * rejection near the restart: no hang), and after the restart each process scheduled and
 * delivered again by itself.
 */
async function pgRestart(crashes: number, downMs: number): Promise<Row> {
  const faults = `pg_ctl stop -m immediate under load, down ${downMs / 1000} s, started again on its port and data (${crashes}x); the 2 delayq processes run on`;
  return scenario('postgres: server crash, restart', faults, 'clean', (round) =>
    withPostgres(round, async (cluster, store) => {
      const names = ['r0', 'r1'];
      const workers = names.map((name) => spawnWorker(base(store, name, { rate: 100 }), round));
      await Promise.all(workers.map((w) => w.ready));
      const windows: { downAt: number; upAt: number; startedAt: number }[] = [];
      for (let c = 0; c < crashes; c++) {
        await sleep(SHORT ? 2_500 : 4_000);
        const downAt = Date.now();
        cluster.crash();
        await sleep(downMs);
        const upAt = Date.now();
        cluster.start();
        windows.push({ downAt, upAt, startedAt: Date.now() });
      }
      const lastUp = windows.at(-1)!.startedAt;
      // Long enough past the restart for schedules made after it to fall due (runAt <= now + maxDelayMs).
      await sleep(SHORT ? 4_000 : 6_000);
      assertAlive(workers);
      readFacts(round);
      const problems = rejectionProblems(round);
      for (const [i, w] of windows.entries()) {
        for (const name of names) {
          const own = round.workerFacts.get(name)!;
          const down = own.errors.filter((e) => e.op === 'schedule' && e.at >= w.downAt && e.at <= w.startedAt);
          const slowest = Math.max(0, ...down.map((e) => e.ms));
          const lastAt = Math.max(0, ...down.map((e) => e.at));
          round.notes.push(
            `crash ${i + 1}, ${name}: ${down.length} schedule calls rejected while down (the first ${down.length === 0 ? '-' : `${down[0]!.at - w.downAt} ms after the stop`}, slowest ${slowest} ms, the last ${down.length === 0 ? '-' : `${w.startedAt - lastAt} ms before the server took connections again`})`,
          );
          if (down.length === 0) problems.push(`crash ${i + 1}: ${name}'s producer saw no STORE_UNAVAILABLE while the server was down (a hang?)`);
          else if (w.startedAt - lastAt > 2_500) problems.push(`crash ${i + 1}: ${name}'s producer got no answer in the last ${w.startedAt - lastAt} ms of the outage (a hang?)`);
          if (slowest > 5_000) problems.push(`crash ${i + 1}: a schedule call of ${name} took ${slowest} ms to reject`);
        }
      }
      const maxDelay = base(store, '').maxDelayMs;
      for (const name of names) {
        const own = round.workerFacts.get(name)!;
        // runAt = creation + [0, maxDelayMs]: a runAt past lastUp + maxDelayMs was created after the restart.
        const after = [...own.scheduled.values()].filter((runAt) => runAt > lastUp + maxDelay).length;
        const delivered = own.deliveries.filter((d) => d.at > lastUp).length;
        round.notes.push(`${name} after the last restart, by itself: ${after} schedules acknowledged, ${delivered} deliveries`);
        if (after === 0 || delivered === 0) problems.push(`${name} did not schedule and deliver again after the restart (${after} schedules, ${delivered} deliveries)`);
      }
      if (problems.length > 0) throw new Error(problems.join('; '));
      await runWorkers(workers, round, 0);
    }),
  );
}

/**
 * Two delayq processes on one schema, each holding half the shards; one SIGKILLed under
 * load while its consumers hold reservations (a delivery is acked HOLD_MS after it came).
 * Its leases run out and the survivor takes its shards (timed here from the kill until
 * shard_leases shows the survivor owning all 16), loads their timers, expires the
 * reservations the dead process held (2 s after they ran out, every 5 s) and delivers them
 * again, with its pending tasks. `kills` times: after each takeover a new process joins
 * and takes its share, and the next kill alternates between the older and the newer one.
 *
 * Both processes consume the one lane (topic `chaos`), and a wakeup of a lane lets any
 * process reserve its due tasks whatever their shard: the dead process's due pending tasks
 * are reserved at the survivor's next promotion or 2 s sweep, before the takeover; the
 * takeover is what brings back the reservations it held.
 */
async function pgTakeover(kills: number): Promise<Row> {
  const HOLD_MS = 200;
  const faults = `2 processes on one schema, one SIGKILLed under load with reservations open; its shards taken over by the survivor (${kills}x, a new second process each time)`;
  return scenario('postgres: takeover', faults, 'clean', (round) =>
    withPostgres(round, async (_cluster, store) => {
      const probe = round.pg!.probe;
      let n = 0;
      const start = (): { name: string; worker: Worker } => {
        const name = `t${n++}`;
        return { name, worker: spawnWorker(base(store, name, { rate: 100, holdMs: HOLD_MS }), round) };
      };
      let workers = [start(), start()];
      await Promise.all(workers.map((w) => w.worker.ready));
      const takeovers: { victim: string; killedAt: number; doneAt: number; shards: Set<number> }[] = [];
      for (let k = 0; k < kills; k++) {
        // Both hold a share before the kill.
        const deadline = Date.now() + 20_000;
        for (;;) {
          const now = Date.now();
          const owners = new Map<string, number>();
          for (const l of await probe.leases()) if (l.owner !== null && l.expiresAt > now) owners.set(l.owner, (owners.get(l.owner) ?? 0) + 1);
          if (owners.size === 2 && [...owners.values()].reduce((a, b) => a + b, 0) === 16) break;
          if (Date.now() > deadline) throw new Error(`the 2 processes did not share the 16 shards in 20 s: ${JSON.stringify([...owners])}`);
          await sleep(100);
        }
        await sleep(SHORT ? 2_000 : 3_000);
        const before = await probe.leases();
        const victim = workers[k % 2]!;
        const survivor = workers[(k + 1) % 2]!;
        assertAlive(workers.map((w) => w.worker));
        const killedAt = Date.now();
        victim.worker.signal('SIGKILL');
        await victim.worker.exited;
        // Taken over: every shard's lease live and held by one owner (the dead one renews nothing).
        for (;;) {
          if (Date.now() - killedAt > 30_000) throw new Error("the survivor did not take the dead process's shards in 30 s");
          await sleep(50);
          const now = Date.now();
          const after = await probe.leases();
          const owners = new Set(after.map((l) => (l.owner !== null && l.expiresAt > now ? l.owner : null)));
          if (owners.size === 1 && !owners.has(null)) {
            const survivorOwner = after[0]!.owner!;
            takeovers.push({ victim: victim.name, killedAt, doneAt: now, shards: new Set(before.filter((l) => l.owner !== survivorOwner).map((l) => l.shard)) });
            break;
          }
        }
        workers = k + 1 < kills ? [survivor, start()] : [survivor];
        await Promise.all(workers.map((w) => w.worker.ready));
      }
      await sleep(SHORT ? 3_000 : 5_000);
      assertAlive(workers.map((w) => w.worker));
      await runWorkers(
        workers.map((w) => w.worker),
        round,
        0,
      );
      readFacts(round);
      const first = firstDeliveries(round.facts);
      for (const [i, t] of takeovers.entries()) {
        const own = round.workerFacts.get(t.victim)!;
        // Reservations the dead process held at its death (no ack of its own): when they were delivered again.
        const acked = new Set(own.acks.map((a) => `${a.id} ${a.attempt}`));
        const open = own.deliveries.filter((d) => !acked.has(`${d.id} ${d.attempt}`));
        const again = open
          .map((d) => Math.min(...round.facts.deliveries.filter((e) => e.id === d.id && e.attempt > d.attempt).map((e) => e.at)) - t.killedAt)
          .sort((a, b) => a - b);
        const missing = again.filter((ms) => ms === Infinity).length;
        const lateness = [...round.facts.scheduled]
          .filter(([id, runAt]) => t.shards.has(shardOf(id, 16)) && runAt >= t.killedAt && runAt <= t.doneAt)
          .map(([id, runAt]) => (first.get(id) ?? Infinity) - runAt)
          .sort((a, b) => a - b);
        round.notes.push(
          `takeover ${i + 1} (${t.victim} killed): its ${t.shards.size} shards owned by the survivor ${((t.doneAt - t.killedAt) / 1000).toFixed(1)} s after the SIGKILL (documented: within 6 s); ` +
            `the ${open.length} reservations it held delivered again ${quantile(again.filter((ms) => ms !== Infinity), 0.5)} (p50) / ${quantile(again.filter((ms) => ms !== Infinity), 1)} (max) after the kill${missing > 0 ? `, ${missing} never` : ''}; ` +
            `its shards' ${lateness.length} tasks due before the takeover delivered with lateness p50 ${quantile(lateness, 0.5)}, max ${quantile(lateness, 1)}`,
        );
      }
    }),
  );
}

// ---------------------------------------------------------------------------------------

const SCENARIOS: Record<string, () => Promise<Row>> = {
  sqlite: () => sqliteKills(SHORT ? 5 : 20),
  http: () => httpKills(SHORT ? 3 : 10),
  'redis-owner-kill': redisOwnerKill,
  'redis-owner-stop': redisOwnerStop,
  'redis-server-kill': redisServerKill,
  'redis-server-stop': redisServerStop,
  'redis-flow-limit': redisFlowLimit,
  'cluster-failover': () => clusterFailover(0),
  'cluster-failover-wait': () => clusterFailover(1),
  'cluster-master-down': clusterMasterDown,
  'pg-sigkill': () => pgKills(SHORT ? 3 : 10),
  'pg-restart': () => pgRestart(SHORT ? 1 : 3, SHORT ? 3_000 : 6_000),
  'pg-takeover': () => pgTakeover(SHORT ? 1 : 3),
};

function failures(row: Row): string[] {
  const out: string[] = [];
  if (row.error !== undefined) out.push(`failed: ${row.error}`);
  if (row.early > 0) out.push(`${row.early} early (${row.examples.early.join(', ')})`);
  if (row.promise === 'clean') {
    if (row.lost > 0) out.push(`${row.lost} lost (${row.examples.lost.join(', ')})`);
    if (row.ackedAgain > 0) out.push(`${row.ackedAgain} delivered after an acknowledged ack (${row.examples.ackedAgain.join(', ')})`);
    if (row.unexplainedDuplicates > 0) out.push(`${row.unexplainedDuplicates} unexplained duplicates (${row.examples.unexplained.join(', ')})`);
  }
  if (row.scheduled === 0) out.push('nothing was scheduled');
  return out;
}

/** A scenario's rounds added up. */
interface Summary {
  readonly name: string;
  rounds: number;
  failedRounds: number;
  scheduled: number;
  delivered: number;
  lost: number;
  early: number;
  ackedAgain: number;
  duplicates: number;
  unexplainedDuplicates: number;
  maxLatenessMs: number;
  seconds: number;
}

function summarize(rows: readonly Row[]): Summary[] {
  const byName = new Map<string, Summary>();
  for (const r of rows) {
    let s = byName.get(r.name);
    if (!s) {
      s = { name: r.name, rounds: 0, failedRounds: 0, scheduled: 0, delivered: 0, lost: 0, early: 0, ackedAgain: 0, duplicates: 0, unexplainedDuplicates: 0, maxLatenessMs: 0, seconds: 0 };
      byName.set(r.name, s);
    }
    s.rounds++;
    if (failures(r).length > 0) s.failedRounds++;
    s.scheduled += r.scheduled;
    s.delivered += r.delivered;
    s.lost += r.lost;
    s.early += r.early;
    s.ackedAgain += r.ackedAgain;
    s.duplicates += r.duplicates;
    s.unexplainedDuplicates += r.unexplainedDuplicates;
    s.maxLatenessMs = Math.max(s.maxLatenessMs, r.maxLatenessMs);
    s.seconds += r.seconds;
  }
  return [...byName.values()];
}

/**
 * Without their binaries (initdb and pg_ctl, redis-server and redis-cli) a store's scenarios
 * are skipped with a message, unless CI=true.
 */
function skipWithout(missing: string | null, scenarios: string): boolean {
  if (missing === null) return false;
  if (process.env['CI'] === 'true') throw new Error(missing);
  console.log(`# ${missing}: the ${scenarios} scenarios skipped`);
  return true;
}

const redisNames = Object.keys(SCENARIOS).filter((n) => n.startsWith('redis') || n.startsWith('cluster'));
const skipRedis = skipWithout(redisMissing(), 'Redis');
const skipPg = skipWithout(postgresBinariesMissing(), 'PostgreSQL');
const names = (ONLY.length > 0 ? ONLY : Object.keys(SCENARIOS)).filter((n) => !(skipRedis && redisNames.includes(n)) && !(skipPg && n.startsWith('pg-')));
for (const n of names) if (!(n in SCENARIOS)) throw new Error(`unknown scenario "${n}"; known: ${Object.keys(SCENARIOS).join(', ')}`);
const loadText = LOAD === null ? 'no load' : `load: ${LOAD.cpu} CPU spinner(s), ${LOAD.io} fsync writer(s)`;
if (LOAD !== null || ROUNDS > 1) console.log(`chaos: ${names.join(', ')}; ${ROUNDS} round(s); ${loadText}`);

for (let r = 1; r <= ROUNDS; r++)
  for (const n of names) {
    current.key = n;
    current.round = r;
    const load = LOAD === null ? null : startLoad(LOAD, LOAD_MAX_MS);
    if (load !== null) loads.add(load);
    try {
      rows.push(await SCENARIOS[n]!());
    } finally {
      if (load !== null) {
        await load.stop();
        loads.delete(load);
      }
    }
  }

const code = report(null);
if (code !== 0) process.exit(code);

/** Prints the table (scenarios added up over their rounds), writes the JSON; the exit code. */
function report(interrupted: NodeJS.Signals | null): number {
  const summaries = summarize(rows);
  const header = [
    'scenario',
    ...(ROUNDS > 1 ? ['rounds (failed)'] : []),
    'scheduled',
    'delivered',
    'lost',
    'early',
    'acked-again',
    'duplicates (unexplained)',
    'recovery (max lateness)',
  ];
  const table = summaries.map((s) => [
    s.name,
    ...(ROUNDS > 1 ? [`${s.rounds} (${s.failedRounds})`] : []),
    s.scheduled.toLocaleString('en-US'),
    s.delivered.toLocaleString('en-US'),
    String(s.lost),
    String(s.early),
    String(s.ackedAgain),
    `${s.duplicates} (${s.unexplainedDuplicates})`,
    `${(s.maxLatenessMs / 1000).toFixed(1)} s`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const title = [SHORT ? 'short' : '', ROUNDS > 1 ? `${ROUNDS} rounds` : '', LOAD === null ? '' : loadText].filter((t) => t !== '').join(', ');
  const ended = interrupted === null ? '' : `, stopped by ${interrupted} with ${rows.length} scenario run(s) finished`;
  console.log(`\n### chaos${title === '' ? '' : ` (${title})`}: ${Math.round((Date.now() - started) / 1000)} s${ended}\n`);
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of table) console.log(line(r));

  const problems = rows.flatMap((r) => failures(r).map((f) => `${r.name}${ROUNDS > 1 ? ` (round ${r.round})` : ''}: ${f}`));
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `chaos${SHORT ? '-short' : ''}${LOAD === null ? '' : '-load'}${ROUNDS > 1 ? '-rounds' : ''}-latest.json`);
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        at: new Date().toISOString(),
        short: SHORT,
        ...(interrupted === null ? {} : { interrupted }),
        ...(ROUNDS > 1 ? { rounds: ROUNDS } : {}),
        ...(LOAD === null ? {} : { load: LOAD }),
        seconds: Math.round((Date.now() - started) / 1000),
        machine: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model },
        ...(ROUNDS > 1 ? { summary: summaries } : {}),
        scenarios: rows,
        problems,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nwritten to ${file}`);
  if (problems.length > 0) {
    console.error(`\nchaos: promises broken:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    return 1;
  }
  console.log(interrupted === null ? 'chaos: every promise held' : `chaos: every promise held in the rounds finished before the ${interrupted}`);
  return 0;
}
