/**
 * npm run chaos [-- --short] [-- <scenario name> ...]
 *
 * Fault scenarios against real processes under load, each judged by the checker
 * (checker.ts): every task whose schedule was acknowledged delivered at least once and
 * never before its runAt, no delivery after an acknowledged ack, duplicates counted and
 * explained by open leases. Prints one table and writes chaos/results/chaos-latest.json
 * (chaos-short-latest.json with --short). Exits 1 when a scenario breaks a promise it makes.
 *
 * Every process (workers, delayq serve, redis-server) is started here and stopped by PID.
 * Bounded: the full run takes a few minutes (<= 15), --short (fewer kills, shorter loads,
 * what .ci/run runs) ~2-3 minutes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { DelayQClient } from '../src/client/index.js';
import { cli, freePort, redisSkip, startCluster, startRedis, type RedisServer } from '../test/helpers/redis-servers.js';
import { addLine, check, newFacts, type Facts, type Verdict } from './checker.js';
import type { WorkerConfig } from './worker.js';

const SHORT = process.argv.includes('--short');
const ONLY = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const ROOT = join(import.meta.dirname, '..');

interface Row extends Verdict {
  readonly name: string;
  readonly faults: string;
  /** 'clean': must lose nothing; 'may-lose': what it loses is what the scenario shows. */
  readonly promise: 'clean' | 'may-lose';
  readonly seconds: number;
  readonly notes: string[];
}

// ---------------------------------------------------------------------------------------
// Processes

interface Worker {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<void>;
  signal(signal: NodeJS.Signals): void;
}

function spawnWorker(config: WorkerConfig, facts: Facts): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'chaos/worker.ts')], {
    cwd: ROOT,
    env: { ...process.env, CHAOS_WORKER: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => void (stderr.length < 10_000 && (stderr += chunk.toString())));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line === 'R') resolve();
      else addLine(facts, line);
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

const base = (store: string, idPrefix: string, extra: Partial<WorkerConfig> = {}): WorkerConfig => ({
  store,
  idPrefix,
  rate: 150,
  maxDelayMs: 1_500,
  payloadBytes: 64,
  ttrMs: 1_500,
  consumers: 2,
  ...extra,
});

/**
 * Waits until every acknowledged schedule has been delivered, or nothing new has been
 * delivered for `quietMs` (a task lost never comes), or `maxMs` passed.
 */
async function drain(facts: Facts, quietMs = 6_000, maxMs = 60_000): Promise<void> {
  const started = Date.now();
  let seen = -1;
  let since = Date.now();
  for (;;) {
    await sleep(250);
    const delivered = new Set(facts.deliveries.map((d) => d.id));
    let missing = 0;
    for (const id of facts.scheduled.keys()) if (!delivered.has(id)) missing++;
    if (missing === 0) {
      // The last deliveries' acks land.
      await sleep(500);
      return;
    }
    if (facts.deliveries.length !== seen) {
      seen = facts.deliveries.length;
      since = Date.now();
    }
    if (Date.now() - since > quietMs || Date.now() - started > maxMs) return;
  }
}

async function scenario(
  name: string,
  faults: string,
  promise: Row['promise'],
  body: (facts: Facts, notes: string[]) => Promise<void>,
): Promise<Row> {
  const facts = newFacts();
  const notes: string[] = [];
  const started = Date.now();
  console.log(`\n# ${name}: ${faults}`);
  await body(facts, notes);
  const verdict = check(facts);
  // The facts behind each offending id, for the report.
  const offending = new Set([...verdict.examples.lost, ...verdict.examples.early, ...verdict.examples.ackedAgain, ...verdict.examples.unexplained]);
  for (const id of offending)
    notes.push(
      `${id}: scheduled runAt ${facts.scheduled.get(id) ?? '-'}; delivered ${JSON.stringify(facts.deliveries.filter((d) => d.id === id))}; acked ${JSON.stringify(facts.acks.filter((a) => a.id === id))}`,
    );
  const row: Row = { name, faults, promise, seconds: Math.round((Date.now() - started) / 1000), notes, ...verdict };
  console.log(
    `  scheduled ${row.scheduled}, delivered ${row.delivered}, lost ${row.lost}, early ${row.early}, acked-again ${row.ackedAgain}, ` +
      `duplicates ${row.duplicates} (unexplained ${row.unexplainedDuplicates}), max lateness ${row.maxLatenessMs} ms, ${row.seconds} s`,
  );
  for (const note of notes) console.log(`  ${note}`);
  return row;
}

const pick = (low: number, high: number): number => low + Math.random() * (high - low);

// ---------------------------------------------------------------------------------------
// Scenarios

async function sqliteKills(kills: number): Promise<Row> {
  return scenario('sqlite: SIGKILL', `the one process SIGKILLed ${kills}x under load`, 'clean', async (facts) => {
    const dir = mkdtempSync(join(tmpdir(), 'delayq-chaos-sqlite-'));
    const store = `sqlite:${join(dir, 'q.db')}`;
    try {
      for (let k = 0; k < kills; k++) {
        const worker = spawnWorker(base(store, `s${k}`), facts);
        await worker.ready;
        await sleep(pick(600, 1_500));
        worker.signal('SIGKILL');
        await worker.exited;
      }
      const last = spawnWorker(base(store, 'last', { rate: 0 }), facts);
      await last.ready;
      await drain(facts);
      await stopWorker(last);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

async function httpKills(kills: number): Promise<Row> {
  return scenario('http: server SIGKILL', `delayq serve (SQLite) SIGKILLed ${kills}x under HTTP load (POST + reserve + ack)`, 'clean', async (facts) => {
    const dir = mkdtempSync(join(tmpdir(), 'delayq-chaos-http-'));
    const store = `sqlite:${join(dir, 'q.db')}`;
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
            for (let i = 0; i < tasks.length; i++) if (!('error' in results[i]!)) addLine(facts, `S ${tasks[i]!.id} ${tasks[i]!.runAt}`);
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
        for (const d of batch) addLine(facts, `D ${d.id} ${d.attempt} ${d.reservedUntil - 1_500}`);
        for (let tries = 0; tries < 20 && running; tries++) {
          try {
            const outcomes = await client.ackMany(batch);
            const done = Date.now();
            batch.forEach((d, i) => outcomes[i] === 'acked' && addLine(facts, `A ${d.id} ${d.attempt} ${done}`));
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
      await drain(facts);
    } finally {
      running = false;
      producing = false;
      await Promise.all([producer, ...consumers]);
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
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

async function runWorkers(workers: Worker[], facts: Facts, loadMs: number): Promise<void> {
  await sleep(loadMs);
  for (const w of workers) w.signal('SIGUSR2');
  await drain(facts);
  await Promise.all(workers.map(stopWorker));
}

async function redisOwnerKill(): Promise<Row> {
  return scenario('redis: owner SIGKILL', 'one of 3 processes SIGKILLed; its shards taken over when its lease (5 s) runs out', 'clean', (facts) =>
    withRedis({ appendonly: true }, async (redis) => {
      const store = `${redis.url}?prefix=own&shards=16`;
      const workers = [0, 1, 2].map((i) => spawnWorker(base(store, `o${i}`, { rate: 100 }), facts));
      await Promise.all(workers.map((w) => w.ready));
      await sleep(SHORT ? 2_000 : 4_000);
      workers[0]!.signal('SIGKILL');
      await runWorkers(workers.slice(1), facts, SHORT ? 7_000 : 10_000);
    }),
  );
}

async function redisOwnerStop(): Promise<Row> {
  return scenario('redis: owner SIGSTOP', 'one of 3 processes frozen (SIGSTOP) 7 s, past its 5 s lease, then SIGCONT', 'clean', (facts) =>
    withRedis({ appendonly: true }, async (redis) => {
      const store = `${redis.url}?prefix=stp&shards=16`;
      const workers = [0, 1, 2].map((i) => spawnWorker(base(store, `p${i}`, { rate: 100 }), facts));
      await Promise.all(workers.map((w) => w.ready));
      await sleep(SHORT ? 2_000 : 4_000);
      workers[0]!.signal('SIGSTOP');
      await sleep(7_000);
      workers[0]!.signal('SIGCONT');
      await runWorkers(workers, facts, SHORT ? 3_000 : 6_000);
    }),
  );
}

async function redisServerKill(): Promise<Row> {
  return scenario('redis: redis-server SIGKILL', 'redis-server (AOF, appendfsync always) SIGKILLed and restarted on its data', 'clean', async (facts) => {
    let redis = await startRedis({ appendonly: true });
    const { port, dir } = redis;
    try {
      const store = `${redis.url}?prefix=rk&shards=16`;
      const workers = [0, 1].map((i) => spawnWorker(base(store, `k${i}`, { rate: 150 }), facts));
      await Promise.all(workers.map((w) => w.ready));
      const kills = SHORT ? 1 : 2;
      for (let k = 0; k < kills; k++) {
        await sleep(SHORT ? 2_500 : 4_000);
        await redis.kill();
        await sleep(1_000);
        redis = await startRedis({ appendonly: true, port, dir });
      }
      await runWorkers(workers, facts, 3_000);
    } finally {
      await redis.stop();
      redis.remove();
    }
  });
}

async function clusterFailover(waitReplicas: 0 | 1): Promise<Row> {
  const name = waitReplicas === 0 ? 'redis cluster: failover' : 'redis cluster: failover, waitReplicas=1';
  const faults = '3 masters + 3 replicas; a replica lags 1.5 s (SIGSTOP), then its master is SIGKILLed and the replica takes over';
  return scenario(name, faults, waitReplicas === 0 ? 'may-lose' : 'clean', async (facts, notes) => {
    const cluster = await startCluster(3, 1);
    const servers = [...cluster.servers];
    try {
      const victim = servers[0]!;
      const replica = servers.find((s) => cli(s.port, 'INFO', 'replication').includes(`master_port:${victim.port}`));
      if (!replica) throw new Error('no replica of the first master');
      const store = `${cluster.url}?prefix=cf${waitReplicas}&shards=16${waitReplicas ? `&waitReplicas=1&waitTimeoutMs=500` : ''}`;
      // Large payloads, so the replica's lag is more than the socket buffers hold.
      const workers = [0, 1].map((i) => spawnWorker(base(store, `c${i}`, { rate: 150, payloadBytes: 16 * 1024, ttrMs: 3_000 }), facts));
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
      notes.push(`replica promoted ${((Date.now() - killedAt) / 1000).toFixed(1)} s after its master was killed`);
      // The old master comes back as a replica of the new one (so waitReplicas=1 can be met again).
      servers[0] = await startRedis({ cluster: true, port: victim.port, dir: victim.dir });
      await runWorkers(workers, facts, SHORT ? 3_000 : 6_000);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      for (const s of servers) s.remove();
    }
  });
}

// ---------------------------------------------------------------------------------------

const SCENARIOS: Record<string, () => Promise<Row>> = {
  sqlite: () => sqliteKills(SHORT ? 5 : 20),
  http: () => httpKills(SHORT ? 3 : 10),
  'redis-owner-kill': redisOwnerKill,
  'redis-owner-stop': redisOwnerStop,
  'redis-server-kill': redisServerKill,
  'cluster-failover': () => clusterFailover(0),
  'cluster-failover-wait': () => clusterFailover(1),
};

function failures(row: Row): string[] {
  const out: string[] = [];
  if (row.early > 0) out.push(`${row.early} early (${row.examples.early.join(', ')})`);
  if (row.promise === 'clean') {
    if (row.lost > 0) out.push(`${row.lost} lost (${row.examples.lost.join(', ')})`);
    if (row.ackedAgain > 0) out.push(`${row.ackedAgain} delivered after an acknowledged ack (${row.examples.ackedAgain.join(', ')})`);
    if (row.unexplainedDuplicates > 0) out.push(`${row.unexplainedDuplicates} unexplained duplicates (${row.examples.unexplained.join(', ')})`);
  }
  if (row.scheduled === 0) out.push('nothing was scheduled');
  return out;
}

const redisNames = Object.keys(SCENARIOS).filter((n) => n.startsWith('redis') || n.startsWith('cluster'));
const skipRedis = redisSkip();
const names = (ONLY.length > 0 ? ONLY : Object.keys(SCENARIOS)).filter((n) => !(skipRedis && redisNames.includes(n)));
for (const n of names) if (!(n in SCENARIOS)) throw new Error(`unknown scenario "${n}"; known: ${Object.keys(SCENARIOS).join(', ')}`);

const started = Date.now();
const rows: Row[] = [];
for (const n of names) rows.push(await SCENARIOS[n]!());

const header = ['scenario', 'scheduled', 'delivered', 'lost', 'early', 'acked-again', 'duplicates (unexplained)', 'recovery (max lateness)'];
const table = rows.map((r) => [
  r.name,
  r.scheduled.toLocaleString('en-US'),
  r.delivered.toLocaleString('en-US'),
  String(r.lost),
  String(r.early),
  String(r.ackedAgain),
  `${r.duplicates} (${r.unexplainedDuplicates})`,
  `${(r.maxLatenessMs / 1000).toFixed(1)} s`,
]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(`\n### chaos${SHORT ? ' (short)' : ''}: ${Math.round((Date.now() - started) / 1000)} s\n`);
console.log(line(header));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const r of table) console.log(line(r));

const problems = rows.flatMap((r) => failures(r).map((f) => `${r.name}: ${f}`));
const dir = join(ROOT, 'chaos', 'results');
mkdirSync(dir, { recursive: true });
const file = join(dir, SHORT ? 'chaos-short-latest.json' : 'chaos-latest.json');
writeFileSync(
  file,
  `${JSON.stringify(
    {
      at: new Date().toISOString(),
      short: SHORT,
      seconds: Math.round((Date.now() - started) / 1000),
      machine: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model },
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
  process.exit(1);
}
console.log('chaos: every promise held');
