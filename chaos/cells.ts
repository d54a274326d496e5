/**
 * The PostgreSQL cells of the public job-queue benchmark (github.com/hardbyte/postgresql-job-queue-benchmarking:
 * pg_backend_kill, idle_in_tx, active_readers, pool_exhaustion, sustained_high_load) as chaos
 * scenarios: one queue process on a cluster of the round's own, under a steady load (tasks
 * due 100-500 ms after they are scheduled, worked by 4 consumers of up to 20 tasks), through
 * three phases:
 *
 *   baseline   the load alone
 *   stress     the load and the cell's fault (cell.start ... stop)
 *   recovery   the load alone again
 *
 * Per phase it reports completions/s (acks acknowledged in the phase), tasks due per second,
 * lateness p50/p99/max of the tasks due in the phase (first delivery - runAt; a task never
 * delivered counts as late without end) and the dead tuples of the system's schema
 * (pg_stat_user_tables, sampled every second: at the phase's end and its peak). Beside the
 * checker's promises (nothing acknowledged lost, nothing early, no delivery after an ack), a
 * delayq row fails the run when:
 *
 *   - an attempt was delivered twice (the same task and attempt number in two deliveries);
 *   - recovery's completions/s fall under 95% of the baseline's;
 *   - lateness is not back to normal within 5 s of the stress's end: the first 1 s window
 *     (by runAt) that starts 3 normal windows in a row starts more than 5 s after it; a
 *     window is normal when its p99 is within max(100 ms, 3x the baseline's p99);
 *   - a check of the cell's own fails (pg-backend-kill: what the callers saw).
 *
 * Whether the stress phase's p99 stays within that same bound is issue 48's target for the
 * claim path under a held xmin horizon (ADR 0055 says where the time went and what changed):
 * a cell with `stressBound` (pg-idle-in-tx, pg-active-readers) fails the run when it does
 * not, in full runs. A `--short` run (CI, on a host that runs other work) reports it only:
 * 12 s of stress is too short for dead tuples to pile up, and a busy host's hiccup there
 * says nothing about the claim path.
 *
 * The same cell runs pg-boss 12 (pgboss-worker.ts) in a row of its own (`pgboss-<cell>`,
 * promise 'peer': reported beside delayq, never failing the run), on a cluster of its own.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { node24 } from '../bench/node24.js';
import type { Facts } from './checker.js';
import type { PgProbe } from './postgres-rows.js';
import { assertAlive, ROOT, spawnWorker, stopWorker, type WorkerProgram } from './processes.js';
import { base, drain, readFacts, scenario, type Round, type Row, type Run, type Scenario } from './round.js';
import { PG_SCHEMA, withPostgres } from './servers.js';

export type CellSystem = 'delayq' | 'pg-boss';

/** pgboss-worker.ts's schema (not imported: that module starts pg-boss when loaded). */
const PGBOSS_SCHEMA = 'pgboss_chaos';
/** Tasks are due this far after they are scheduled (the issue's measurements: 100-500 ms). */
const MIN_DELAY_MS = 100;
const MAX_DELAY_MS = 500;
/** Unmeasured, before the baseline: connections made, code warm. */
const WARM_UP_MS = 3_000;
/** Lateness is back to normal when a window's p99 is within max(this, 3x the baseline's). */
const NORMAL_FLOOR_MS = 100;
const NORMAL_FACTOR = 3;
/** Back to normal within this long of the stress's end (of the backlog's drain, after an overload). */
const RECOVERY_LIMIT_MS = 5_000;
/** Recovery's completions/s at least this share of the baseline's. */
const RECOVERY_SHARE = 0.95;

export interface Durations {
  readonly baselineMs: number;
  readonly stressMs: number;
  readonly recoveryMs: number;
}

/** What a cell's fault gets to work with. */
export interface StressContext {
  /** A superuser URL of the round's cluster (its `postgres` database, where the queue's schema is). */
  readonly url: string;
  /** The system's schema: `chaos` (delayq) or pg-boss's. */
  readonly schema: string;
  /** The system's busiest table, for the readers: delayq's `tasks`, pg-boss's `job`. */
  readonly hotTable: string;
  readonly system: CellSystem;
  readonly run: Run;
  readonly round: Round;
  /** Sets the worker's producing rate (tasks/s) from now on. */
  setRate(rate: number): void;
  /** The rate the load runs at outside the stress. */
  readonly baseRate: number;
  /** The overload cell's measurement of what the host sustains (completions/s), else null. */
  readonly capacity: number | null;
}

/** A fault in effect: stop() ends it and says what it did. */
export interface Stress {
  stop(): Promise<string[]>;
}

export interface Cell {
  /** The delayq row's scenario name (`pg-idle-in-tx`); pg-boss's is `pgboss-` and the rest. */
  readonly name: string;
  /** In the row's name: `postgres: <title>`, `pg-boss: <title>`. */
  readonly title: string;
  faults(run: Run): string;
  durations(run: Run): Durations;
  /** Tasks/s of the load outside the stress. */
  rate(run: Run): number;
  /** Server settings of the round's cluster. */
  settings?(run: Run): Readonly<Record<string, string | number>>;
  /** Parameters added to delayq's store URL (`&callTimeoutMs=2000`). */
  readonly storeParameters?: string;
  /** Successful calls at least this slow are logged by the worker (C lines). */
  readonly slowCallMs?: number;
  /**
   * The overload cell: before the baseline, the load is raised past what the host sustains
   * for a while to measure it (capacity), and recovery is judged from the backlog's drain.
   */
  readonly overload?: boolean;
  /** The stress phase's lateness p99 must stay within normal (max(100 ms, 3x the baseline's p99)): judged in full runs. */
  readonly stressBound?: boolean;
  start(ctx: StressContext): Promise<Stress>;
  /** The cell's own checks, on the round's facts once drained. */
  judge?(facts: Facts, phases: PhaseWindows, system: CellSystem): CellCheck[];
}

export interface PhaseWindows {
  readonly baseline: { readonly from: number; readonly to: number };
  readonly stress: { readonly from: number; readonly to: number };
  readonly recovery: { readonly from: number; readonly to: number };
}

export interface PhaseStats {
  readonly phase: 'baseline' | 'stress' | 'recovery';
  readonly seconds: number;
  readonly completionsPerSecond: number;
  /** Acknowledged tasks whose runAt falls in the phase, per second: the load offered. */
  readonly duePerSecond: number;
  readonly latenessP50: number;
  readonly latenessP99: number;
  readonly latenessMax: number;
  /** Dead tuples of the schema's tables at the phase's end, and the most seen during it (null: not read). */
  readonly deadTuplesEnd: number | null;
  readonly deadTuplesPeak: number | null;
}

export interface CellCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

export interface CellResult {
  readonly cell: string;
  readonly system: CellSystem;
  readonly phases: PhaseStats[];
  /** max(100 ms, 3x the baseline's p99): what a 1 s window's p99 must be within to be normal. */
  readonly normalMs: number;
  /** From the stress's end (or the backlog's drain) to lateness back to normal; null: never in the recovery phase. */
  readonly backToNormalMs: number | null;
  /** Whether the stress phase's p99 stayed within normalMs (issue 48's target, reported). */
  readonly stressWithinNormal: boolean;
  readonly capacity: number | null;
  readonly checks: CellCheck[];
}

/** A client of the runner's own on the round's cluster: its application_name keeps it out of the backend killer's reach. */
export async function chaosClient(url: string, role: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: `delayq-chaos-${role}`, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** The nearest-rank quantile of ascending numbers (NaN when there are none). */
function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Every acknowledged task's lateness, by runAt (Infinity: never delivered). */
export function latenessByRunAt(facts: Facts): { runAt: number; lateness: number; delivered: number }[] {
  const first = new Map<string, number>();
  for (const d of facts.deliveries) if (!first.has(d.id) || d.at < first.get(d.id)!) first.set(d.id, d.at);
  return [...facts.scheduled]
    .map(([id, runAt]) => {
      const at = first.get(id) ?? Infinity;
      return { runAt, lateness: at - runAt, delivered: at };
    })
    .sort((a, b) => a.runAt - b.runAt);
}

function latenessIn(tasks: ReturnType<typeof latenessByRunAt>, from: number, to: number): number[] {
  return tasks
    .filter((t) => t.runAt >= from && t.runAt < to)
    .map((t) => t.lateness)
    .sort((a, b) => a - b);
}

/** The same task and attempt delivered twice: what "no attempt delivered twice" forbids. */
export function attemptsDeliveredTwice(facts: Facts): string[] {
  const seen = new Set<string>();
  const twice: string[] = [];
  for (const d of facts.deliveries) {
    const key = `${d.id} ${d.attempt}`;
    if (seen.has(key)) twice.push(key);
    seen.add(key);
  }
  return twice;
}

/** The tasks due by `t` (with the normal lateness allowed) and not yet delivered then. */
export function backlogAt(tasks: ReturnType<typeof latenessByRunAt>, t: number, normalMs: number): number {
  let n = 0;
  for (const task of tasks) {
    if (task.runAt > t - normalMs) break;
    if (task.delivered > t) n++;
  }
  return n;
}

/**
 * When lateness is back to normal after `from`: the start of the first 1 s window (by runAt)
 * that begins 3 normal windows in a row, each window holding some due task; null if none
 * does before `to`.
 */
export function backToNormal(tasks: ReturnType<typeof latenessByRunAt>, from: number, to: number, normalMs: number): number | null {
  const windows: boolean[] = [];
  for (let start = from; start + 1_000 <= to; start += 1_000) {
    const lateness = latenessIn(tasks, start, start + 1_000);
    windows.push(lateness.length > 0 && quantile(lateness, 0.99) <= normalMs);
  }
  for (let k = 0; k + 2 < windows.length; k++) if (windows[k] && windows[k + 1] && windows[k + 2]) return k * 1_000;
  return null;
}

/** Samples the schema's dead tuples every second until stopped. */
function sampleDeadTuples(probe: PgProbe): { samples: { at: number; dead: number }[]; stop(): Promise<void> } {
  const samples: { at: number; dead: number }[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const read = await probe.deadTuples();
      if (read !== null) samples.push({ at: Date.now(), dead: read.dead });
      await sleep(1_000);
    }
  })();
  return {
    samples,
    async stop() {
      running = false;
      await loop;
    },
  };
}

const fmt = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : n === Infinity ? 'never' : '-');

/** One phase's figures as a note. */
export function phaseText(p: PhaseStats): string {
  const dead = p.deadTuplesEnd === null ? '-' : `${fmt(p.deadTuplesEnd)} (peak ${fmt(p.deadTuplesPeak ?? NaN)})`;
  return `${p.phase} ${p.seconds} s: ${fmt(p.completionsPerSecond)} completions/s (${fmt(p.duePerSecond)} due/s), lateness p50 ${fmt(p.latenessP50)} / p99 ${fmt(p.latenessP99)} / max ${fmt(p.latenessMax)} ms, dead tuples ${dead}`;
}

/** Runs `cell` for `system` (a scenario() round). */
function runCell(run: Run, cell: Cell, system: CellSystem): Promise<Row> {
  const delayq = system === 'delayq';
  const durations = cell.durations(run);
  const name = `${delayq ? 'postgres' : 'pg-boss'}: ${cell.title}`;
  const schema = delayq ? PG_SCHEMA : PGBOSS_SCHEMA;
  return scenario(run, name, cell.faults(run), delayq ? 'clean' : 'peer', (round) =>
    withPostgres(
      round,
      async (cluster, store) => {
        const probe = round.pg!.probe;
        const baseRate = cell.rate(run);
        const rateFile = join(round.dir, 'rate');
        const setRate = (rate: number): void => writeFileSync(rateFile, String(Math.round(rate)));
        setRate(baseRate);
        const program: WorkerProgram | undefined = delayq ? undefined : { node: node24(process.env['DELAYQ_NODE24']), script: join(ROOT, 'chaos/pgboss-worker.ts') };
        const config = base(delayq ? `${store}${cell.storeParameters ?? ''}` : cluster.url, 'c', {
          rate: baseRate,
          minDelayMs: MIN_DELAY_MS,
          maxDelayMs: MAX_DELAY_MS,
          consumers: 4,
          reserveMax: 20,
          rateFile,
          ...(cell.slowCallMs === undefined ? {} : { slowCallMs: cell.slowCallMs }),
        });
        const worker = spawnWorker(config, round, program);
        await worker.ready;
        const sampler = sampleDeadTuples(probe);
        try {
          await sleep(WARM_UP_MS);
          let capacity: number | null = null;
          let rate = baseRate;
          if (cell.overload === true) {
            ({ capacity, rate } = await measureCapacity(run, round, setRate, baseRate));
            setRate(rate);
          }
          const ctx: StressContext = { url: cluster.url, schema, hotTable: delayq ? 'tasks' : 'job', system, run, round, setRate, baseRate: rate, capacity };
          const windows = await phases(durations, ctx, cell, worker.exited);
          assertAlive([worker]);
          worker.signal('SIGUSR2');
          await drain(round);
          await stopWorker(worker);
          await sampler.stop();
          readFacts(round);
          round.cell = judgeCell(cell, system, round, windows, sampler.samples, capacity, run.short);
          for (const p of round.cell.phases) round.notes.push(phaseText(p));
          round.notes.push(
            `normal: p99 within ${round.cell.normalMs} ms (max(${NORMAL_FLOOR_MS}, ${NORMAL_FACTOR}x the baseline's)); stress within it: ${round.cell.stressWithinNormal ? 'yes' : 'no'}; back to normal ${round.cell.backToNormalMs === null ? 'never in the recovery phase' : `${(round.cell.backToNormalMs / 1000).toFixed(1)} s after ${cell.overload === true ? "the backlog's drain" : "the stress's end"}`}`,
          );
          for (const c of round.cell.checks) round.notes.push(`${c.ok ? 'ok' : 'FAILED'}: ${c.name}: ${c.detail}`);
        } finally {
          await sampler.stop();
        }
      },
      { ...(cell.settings === undefined ? {} : { settings: cell.settings(run) }), schema },
    ),
  );
}

/**
 * The overload cell's first step, what the host sustains: the load doubled from twice the
 * cell's rate every window (2 s; 4 s in a full run) until the completions of two windows in a
 * row (each counted 500 ms later, the tasks being due 100-500 ms after they are scheduled)
 * fall under 90% of what they offered: the most completions/s of any window is the capacity
 * (one saturated window alone read low on a busy host). The backlog stays two windows' excess.
 * Then the load is set back to the cell's rate (at most half the capacity) until the backlog
 * is worked off.
 */
async function measureCapacity(run: Run, round: Round, setRate: (rate: number) => void, baseRate: number): Promise<{ capacity: number; rate: number }> {
  const windowMs = run.short ? 2_000 : 4_000;
  const steps: string[] = [];
  let capacity = 0;
  let saturated = 0;
  for (let offered = 2 * baseRate; ; offered *= 2) {
    setRate(offered);
    const from = Date.now() + 500;
    await sleep(windowMs + 500);
    const to = Date.now();
    readFacts(round);
    const done = round.facts.acks.filter((a) => a.at >= from && a.at < to).length / ((to - from) / 1_000);
    steps.push(`${offered.toLocaleString('en-US')}/s -> ${Math.round(done).toLocaleString('en-US')}/s`);
    capacity = Math.max(capacity, Math.round(done));
    saturated = done < 0.9 * offered ? saturated + 1 : 0;
    if (saturated === 2 || offered >= 64_000) break;
  }
  const rate = Math.min(baseRate, Math.round(capacity / 2));
  setRate(rate);
  // Worked off: nothing due for a second and undelivered (60 s at most).
  const deadline = Date.now() + 60_000;
  for (;;) {
    await sleep(500);
    readFacts(round);
    const first = new Set(round.facts.deliveries.map((d) => d.id));
    const now = Date.now();
    let owed = 0;
    for (const [id, runAt] of round.facts.scheduled) if (runAt < now - 1_000 && !first.has(id)) owed++;
    if (owed === 0 || now > deadline) break;
  }
  round.notes.push(`capacity: ${capacity.toLocaleString('en-US')} completions/s (offered -> completed, windows of ${windowMs / 1000} s: ${steps.join(', ')}); load outside the stress ${rate.toLocaleString('en-US')}/s`);
  return { capacity, rate };
}

/** Baseline, stress, recovery; the windows as they were. A worker that exits ends it (its own failure). */
async function phases(durations: Durations, ctx: StressContext, cell: Cell, exited: Promise<void>): Promise<PhaseWindows> {
  const wait = async (ms: number): Promise<void> => {
    const died = await Promise.race([sleep(ms).then(() => false), exited.then(() => true)]);
    if (died) throw new Error('the worker exited during the cell');
  };
  const baselineFrom = Date.now();
  await wait(durations.baselineMs);
  // The stress phase starts once the fault is in effect (opening 300 connections takes a while).
  const stress = await cell.start(ctx);
  const stressFrom = Date.now();
  let notes: string[] = [];
  try {
    await wait(durations.stressMs);
  } finally {
    notes = await stress.stop();
  }
  const stressTo = Date.now();
  ctx.round.notes.push(...notes);
  await wait(durations.recoveryMs);
  return { baseline: { from: baselineFrom, to: stressFrom }, stress: { from: stressFrom, to: stressTo }, recovery: { from: stressTo, to: Date.now() } };
}

function judgeCell(cell: Cell, system: CellSystem, round: Round, windows: PhaseWindows, samples: readonly { at: number; dead: number }[], capacity: number | null, short: boolean): CellResult {
  const facts = round.facts;
  const tasks = latenessByRunAt(facts);
  const stats = (phase: PhaseStats['phase']): PhaseStats => {
    const { from, to } = windows[phase];
    const seconds = (to - from) / 1_000;
    const lateness = latenessIn(tasks, from, to);
    const inPhase = samples.filter((s) => s.at >= from && s.at <= to + 1_000);
    return {
      phase,
      seconds: Math.round(seconds),
      completionsPerSecond: facts.acks.filter((a) => a.at >= from && a.at < to).length / seconds,
      duePerSecond: lateness.length / seconds,
      latenessP50: quantile(lateness, 0.5),
      latenessP99: quantile(lateness, 0.99),
      latenessMax: lateness.at(-1) ?? NaN,
      deadTuplesEnd: inPhase.at(-1)?.dead ?? null,
      deadTuplesPeak: inPhase.length === 0 ? null : Math.max(...inPhase.map((s) => s.dead)),
    };
  };
  const phaseStats = [stats('baseline'), stats('stress'), stats('recovery')];
  const [baseline, stress, recovery] = phaseStats as [PhaseStats, PhaseStats, PhaseStats];
  const normalMs = Math.max(NORMAL_FLOOR_MS, Math.round(NORMAL_FACTOR * baseline.latenessP99));
  // After an overload, the backlog is worked off first: normal lateness is judged from then.
  let from = windows.stress.to;
  const checks: CellCheck[] = [];
  if (cell.overload === true) {
    let drainedAt: number | null = null;
    for (let t = windows.stress.to; t <= windows.recovery.to; t += 100)
      if (backlogAt(tasks, t, normalMs) === 0) {
        drainedAt = t;
        break;
      }
    const backlog = backlogAt(tasks, windows.stress.to, normalMs);
    const spare = capacity === null ? NaN : capacity - baseline.duePerSecond;
    round.notes.push(
      `the stress completed ${fmt(stress.completionsPerSecond)}/s of ${fmt(stress.duePerSecond)}/s offered; backlog at its end ${backlog.toLocaleString('en-US')} tasks; worked off ${drainedAt === null ? 'not within the recovery phase' : `${((drainedAt - windows.stress.to) / 1000).toFixed(1)} s after it`} (the backlog over the spare capacity, ${fmt(capacity ?? NaN)} - ${fmt(baseline.duePerSecond)}/s, is ${Number.isFinite(spare) && spare > 0 ? `${(backlog / spare).toFixed(1)} s` : '-'})`,
    );
    checks.push({ name: 'backlog worked off in the recovery phase', ok: drainedAt !== null, detail: drainedAt === null ? `${backlogAt(tasks, windows.recovery.to, normalMs)} tasks still due and undelivered at its end` : `${((drainedAt - windows.stress.to) / 1000).toFixed(1)} s after the stress` });
    if (drainedAt !== null) from = drainedAt;
  }
  const back = backToNormal(tasks, from, windows.recovery.to, normalMs);
  const twice = attemptsDeliveredTwice(facts);
  checks.push(
    { name: 'no attempt delivered twice', ok: twice.length === 0, detail: twice.length === 0 ? 'none' : `${twice.length} (${twice.slice(0, 5).join(', ')})` },
    {
      name: `recovery completions >= ${RECOVERY_SHARE * 100}% of baseline`,
      ok: recovery.completionsPerSecond >= RECOVERY_SHARE * baseline.completionsPerSecond,
      detail: `${fmt(recovery.completionsPerSecond)}/s against ${fmt(baseline.completionsPerSecond)}/s (${((100 * recovery.completionsPerSecond) / baseline.completionsPerSecond).toFixed(0)}%)`,
    },
    {
      name: `lateness back to normal within ${RECOVERY_LIMIT_MS / 1000} s`,
      ok: back !== null && back <= RECOVERY_LIMIT_MS,
      detail: back === null ? `not within the ${Math.round((windows.recovery.to - from) / 1000)} s of recovery judged` : `${(back / 1000).toFixed(0)} s (p99 within ${normalMs} ms in 3 windows of 1 s in a row)`,
    },
    ...(cell.stressBound === true && !short
      ? [{ name: `stress lateness p99 within normal (${normalMs} ms)`, ok: stress.latenessP99 <= normalMs, detail: `${fmt(stress.latenessP99)} ms against the baseline's ${fmt(baseline.latenessP99)} ms` }]
      : []),
    ...(cell.judge?.(facts, windows, system) ?? []),
  );
  return { cell: cell.name, system, phases: phaseStats, normalMs, backToNormalMs: back, stressWithinNormal: stress.latenessP99 <= normalMs, capacity, checks };
}

/** A cell's two scenarios: delayq's (`<name>`) and pg-boss's (`pgboss-<rest>`, full runs only unless named). */
export function cellScenarios(cell: Cell): [Scenario, Scenario] {
  return [
    { name: cell.name, needs: 'postgres', run: (run) => runCell(run, cell, 'delayq') },
    { name: cell.name.replace(/^pg-/, 'pgboss-'), needs: 'postgres', fullOnly: true, run: (run) => runCell(run, cell, 'pg-boss') },
  ];
}
