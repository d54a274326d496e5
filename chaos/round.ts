/**
 * One round of one scenario: scenario() gives it a temp directory and its facts, runs the
 * scenario's body, judges the facts (checker.ts), keeps a broken round's files under
 * chaos/results/kept/ with the standing of each offending task in the store, and removes
 * the rest. Also what most bodies share: the workers' default load (base), reading the
 * facts as they grow (readFacts), and the drain that waits for every acknowledged task.
 */
import { closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PgCluster } from '../test/helpers/postgres-cluster.js';
import { appendFacts, openFacts, type FactsTail } from '../src/testing/facts-file.js';
import { addLine, check, newFacts, undelivered, type Facts, type Verdict } from './checker.js';
import type { PgProbe } from './postgres-rows.js';
import { killAllLive, pgClusters, ROOT, roundDirs, stopWorker, type Worker } from './processes.js';
import { owed, standings } from './sqlite-rows.js';
import type { CellResult } from './cells.js';
import type { WorkerConfig } from './worker.js';

export const RESULTS = join(ROOT, 'chaos', 'results');
/** Offending tasks printed with their rows; the kept directory's standings.txt has them all. */
export const PRINTED_STANDINGS = 30;

/** What a scenario is told about the run: --short, and which round of which scenario this is. */
export interface Run {
  readonly short: boolean;
  /** How many rounds the run has (--rounds). */
  readonly rounds: number;
  /** The scenario's name in the registry (names the directory a broken round is kept in). */
  readonly key: string;
  readonly round: number;
}

export interface Row extends Verdict {
  readonly name: string;
  readonly faults: string;
  /**
   * 'clean': must lose nothing; 'may-lose': what it loses is what the scenario shows; 'peer':
   * another queue (pg-boss) in the same cell, reported beside delayq and never failing the run.
   */
  readonly promise: 'clean' | 'may-lose' | 'peer';
  readonly seconds: number;
  readonly notes: string[];
  /** The round failed before its verdict (a process that would not start, a fault not injected). */
  readonly error?: string;
  readonly round: number;
  /** A PostgreSQL cell's phases and checks (cells.ts). */
  readonly cell?: CellResult;
}

export const base = (store: string, idPrefix: string, extra: Partial<WorkerConfig> = {}): Omit<WorkerConfig, 'factsFile'> => ({
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
export interface Round {
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
  /** A PostgreSQL cell's result, once judged (cells.ts): into the row. */
  cell: CellResult | null;
}

export function readFacts(round: Round, last = false): void {
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
export async function drain(round: Round, quietMs = 6_000, maxMs = 60_000): Promise<void> {
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

export async function scenario(
  run: Run,
  name: string,
  faults: string,
  promise: Row['promise'],
  body: (round: Round) => Promise<void>,
): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), `delayq-chaos-${run.key}-`));
  roundDirs.add(dir);
  let runnerFacts: number | null = null;
  const round: Round = {
    facts: newFacts(),
    notes: [],
    dir,
    sqlite: null,
    pg: null,
    cell: null,
    tails: [],
    stderr: new Map(),
    workerFacts: new Map(),
    record(line) {
      addLine(this.facts, line);
      appendFacts((runnerFacts ??= openFacts(join(dir, 'facts-runner.log'))), `${line}\n`);
    },
  };
  const roundStarted = Date.now();
  console.log(`\n# ${name}${run.rounds > 1 ? ` (round ${run.round}/${run.rounds})` : ''}: ${faults}`);
  let row: Row;
  try {
    await body(round);
    readFacts(round, true);
    const verdict = check(round.facts);
    row = { name, faults, promise, round: run.round, seconds: Math.round((Date.now() - roundStarted) / 1000), notes: round.notes, ...verdict, ...(round.cell === null ? {} : { cell: round.cell }) };
  } catch (error) {
    // Rounds run one at a time: whatever still runs is this round's, and must not run into the next.
    await killAllLive();
    readFacts(round, true);
    row = {
      name,
      faults,
      promise,
      round: run.round,
      seconds: Math.round((Date.now() - roundStarted) / 1000),
      notes: round.notes,
      error: String(error),
      ...check(round.facts),
      ...(round.cell === null ? {} : { cell: round.cell }),
    };
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
    if (failures(row).length > 0) await keep(run, round, row);
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
async function keep(run: Run, round: Round, row: Row): Promise<void> {
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
  const kept = join(RESULTS, 'kept', `${new Date(checkedAt).toISOString().replace(/[:.]/g, '-')}-${run.key}-r${run.round}`);
  mkdirSync(kept, { recursive: true });
  // Copied, not renamed: the temp dir is often on another file system.
  cpSync(round.dir, kept, { recursive: true });
  rmSync(round.dir, { recursive: true, force: true });
  round.notes.push(`kept: ${relative(ROOT, kept)}`);
}

/** A random number in [low, high): when a fault lands. */
export const pick = (low: number, high: number): number => low + Math.random() * (high - low);

/** Lets the workers produce `loadMs` more, stops their producers (SIGUSR2), drains, and stops them. */
export async function runWorkers(workers: Worker[], round: Round, loadMs: number): Promise<void> {
  await sleep(loadMs);
  for (const w of workers) w.signal('SIGUSR2');
  await drain(round);
  await Promise.all(workers.map(stopWorker));
}

/** What breaks a round's promises, in words; empty when it kept them (always, for a peer). */
export function failures(row: Row): string[] {
  const out: string[] = [];
  if (row.promise === 'peer') return out;
  if (row.error !== undefined) out.push(`failed: ${row.error}`);
  if (row.early > 0) out.push(`${row.early} early (${row.examples.early.join(', ')})`);
  if (row.promise === 'clean') {
    if (row.lost > 0) out.push(`${row.lost} lost (${row.examples.lost.join(', ')})`);
    if (row.ackedAgain > 0) out.push(`${row.ackedAgain} delivered after an acknowledged ack (${row.examples.ackedAgain.join(', ')})`);
    if (row.unexplainedDuplicates > 0) out.push(`${row.unexplainedDuplicates} unexplained duplicates (${row.examples.unexplained.join(', ')})`);
  }
  if (row.scheduled === 0) out.push('nothing was scheduled');
  for (const c of row.cell?.checks ?? []) if (!c.ok) out.push(`${c.name}: ${c.detail}`);
  return out;
}


/** A scenario of `npm run chaos`: one round of it per call. */
export interface Scenario {
  /** Its name on the command line (`npm run chaos -- <name>`). */
  readonly name: string;
  /** The servers whose binaries it needs: without them it is skipped (failed under CI=true). */
  readonly needs: 'redis' | 'postgres' | null;
  /** Left out of a --short run unless named (the peers' rows of the cells: they need Node 24 and time). */
  readonly fullOnly?: boolean;
  run(run: Run): Promise<Row>;
}
