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
 * The runner is this file; each scenario is a module of chaos/scenarios/ (index.ts lists
 * them), and what they share is beside it: processes.ts (workers, servers, tracked by PID),
 * round.ts (a round's facts, drain, verdict and kept files), servers.ts (Redis, Redis
 * Cluster, PostgreSQL started for a round), readings.ts, report.ts (the table and JSON).
 *
 * Every process (workers, delayq serve, redis-server, the load) is started here and
 * stopped by PID, and each PostgreSQL cluster (initdb'd in the round's temp dir, on a free
 * port) by `pg_ctl stop` on its data dir; SIGINT or SIGTERM stops the workers, servers,
 * clusters and load at once, and reports the rounds finished so far.
 * Bounded: the full run takes a few minutes (<= 15) a round, --short (fewer kills,
 * shorter loads, what .ci/run runs) ~3-4 minutes (the PostgreSQL scenarios ~20 s each).
 */
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { postgresBinariesMissing } from '../test/helpers/postgres-cluster.js';
import { redisMissing } from '../test/helpers/redis-servers.js';
import { startLoad, type LoadSpec } from './load.js';
import { loads, stopAllNow } from './processes.js';
import { report, type RunOptions } from './report.js';
import type { Row, Scenario } from './round.js';
import { SCENARIOS } from './scenarios/index.js';

/** A scenario takes a minute or two; its load ends by itself well after, should the runner hang. */
const LOAD_MAX_MS = 10 * 60_000;

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
const loadText = LOAD === null ? 'no load' : `load: ${LOAD.cpu} CPU spinner(s), ${LOAD.io} fsync writer(s)`;
const options: RunOptions = { short: SHORT, rounds: ROUNDS, load: LOAD, loadText, started: Date.now() };

/** Every round's row so far: an interrupted run still reports the rounds it finished. */
const rows: Row[] = [];

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    console.error(`\nchaos: ${signal}, stopping every process started here`);
    stopAllNow();
    if (rows.length > 0) report(rows, options, signal);
    process.exit(130);
  });
process.once('exit', stopAllNow);

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

const byName = new Map(SCENARIOS.map((s) => [s.name, s]));
for (const n of ONLY) if (!byName.has(n)) throw new Error(`unknown scenario "${n}"; known: ${[...byName.keys()].join(', ')}`);
const skipRedis = skipWithout(redisMissing(), 'Redis');
const skipPg = skipWithout(postgresBinariesMissing(), 'PostgreSQL');
const chosen: Scenario[] = (ONLY.length > 0 ? ONLY.map((n) => byName.get(n)!) : SCENARIOS.filter((s) => !(SHORT && s.fullOnly === true))).filter(
  (s) => !(skipRedis && s.needs === 'redis') && !(skipPg && s.needs === 'postgres'),
);
if (LOAD !== null || ROUNDS > 1) console.log(`chaos: ${chosen.map((s) => s.name).join(', ')}; ${ROUNDS} round(s); ${loadText}`);

for (let r = 1; r <= ROUNDS; r++)
  for (const s of chosen) {
    const load = LOAD === null ? null : startLoad(LOAD, LOAD_MAX_MS);
    if (load !== null) loads.add(load);
    try {
      rows.push(await s.run({ short: SHORT, rounds: ROUNDS, key: s.name, round: r }));
    } finally {
      if (load !== null) {
        await load.stop();
        loads.delete(load);
      }
    }
  }

const code = report(rows, options, null);
if (code !== 0) process.exit(code);
