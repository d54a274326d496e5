/**
 * The end of a chaos run: one table of the scenarios (added up over their rounds), the
 * JSON in chaos/results/ (chaos[-short][-load][-rounds]-latest.json), and the exit code: 1
 * when a round broke a promise its scenario makes.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { LoadSpec } from './load.js';
import { failures, RESULTS, type Row } from './round.js';

/** How the run was asked for: what the table's title and the file's name say. */
export interface RunOptions {
  readonly short: boolean;
  readonly rounds: number;
  readonly load: LoadSpec | null;
  /** The load in words, for the title. */
  readonly loadText: string;
  /** When the run started (ms). */
  readonly started: number;
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


function printTable(header: readonly string[], table: readonly string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of table) console.log(line(r));
}

const CELL_HEADER = ['cell', 'system', 'phase', 'completions/s (of baseline)', 'due/s', 'lateness p50 / p99 / max, ms', 'p99 vs baseline', 'dead tuples at end (peak)', 'verdict'];

/** The cells' rows, one per phase, delayq's and pg-boss's side by side (rows in run order, grouped by cell). */
function cellsTable(rows: readonly Row[], rounds: number): string[][] {
  const n = (x: number | null): string => (x === null || !Number.isFinite(x) ? (x === Infinity ? 'never' : '-') : Math.round(x).toLocaleString('en-US'));
  const withCells = rows.filter((r) => r.cell !== undefined);
  const order = [...new Set(withCells.map((r) => r.cell!.cell))];
  return order.flatMap((cell) =>
    withCells
      .filter((r) => r.cell!.cell === cell)
      .flatMap((r) => {
        const c = r.cell!;
        const base = c.phases[0]!;
        const failed = failures({ ...r, promise: 'clean' });
        return c.phases.map((p, i) => [
          i === 0 ? cell : '',
          i === 0 ? `${c.system}${rounds > 1 ? ` (round ${r.round})` : ''}` : '',
          p.phase,
          `${n(p.completionsPerSecond)} (${((100 * p.completionsPerSecond) / base.completionsPerSecond).toFixed(0)}%)`,
          n(p.duePerSecond),
          `${n(p.latenessP50)} / ${n(p.latenessP99)} / ${n(p.latenessMax)}`,
          `${(p.latenessP99 / base.latenessP99).toFixed(1)}x`,
          p.deadTuplesEnd === null ? '-' : `${n(p.deadTuplesEnd)} (${n(p.deadTuplesPeak)})`,
          i === 0
            ? failed.length === 0
              ? 'promises held'
              : `${r.promise === 'peer' ? 'would fail' : 'FAILED'}: ${failed.length} (see notes)`
            : i === 1
              ? `stress p99 ${c.stressWithinNormal ? 'within' : 'over'} ${c.normalMs} ms`
              : `normal ${c.backToNormalMs === null ? 'never' : `after ${(c.backToNormalMs / 1000).toFixed(0)} s`}`,
        ]);
      }),
  );
}

/** Prints the table (scenarios added up over their rounds), writes the JSON; the exit code. */
export function report(rows: readonly Row[], options: RunOptions, interrupted: NodeJS.Signals | null): number {
  const { short, rounds, load, loadText, started } = options;
  const summaries = summarize(rows);
  const header = [
    'scenario',
    ...(rounds > 1 ? ['rounds (failed)'] : []),
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
    ...(rounds > 1 ? [`${s.rounds} (${s.failedRounds})`] : []),
    s.scheduled.toLocaleString('en-US'),
    s.delivered.toLocaleString('en-US'),
    String(s.lost),
    String(s.early),
    String(s.ackedAgain),
    `${s.duplicates} (${s.unexplainedDuplicates})`,
    `${(s.maxLatenessMs / 1000).toFixed(1)} s`,
  ]);
  const title = [short ? 'short' : '', rounds > 1 ? `${rounds} rounds` : '', load === null ? '' : loadText].filter((t) => t !== '').join(', ');
  const ended = interrupted === null ? '' : `, stopped by ${interrupted} with ${rows.length} scenario run(s) finished`;
  console.log(`\n### chaos${title === '' ? '' : ` (${title})`}: ${Math.round((Date.now() - started) / 1000)} s${ended}\n`);
  printTable(header, table);
  const cells = cellsTable(rows, rounds);
  if (cells.length > 0) {
    console.log(`\n### PostgreSQL cells: per phase (normal: a 1 s window's p99 within max(100 ms, 3x the baseline's))\n`);
    printTable(CELL_HEADER, cells);
  }

  const problems = rows.flatMap((r) => failures(r).map((f) => `${r.name}${rounds > 1 ? ` (round ${r.round})` : ''}: ${f}`));
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `chaos${short ? '-short' : ''}${load === null ? '' : '-load'}${rounds > 1 ? '-rounds' : ''}-latest.json`);
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        at: new Date().toISOString(),
        short,
        ...(interrupted === null ? {} : { interrupted }),
        ...(rounds > 1 ? { rounds } : {}),
        ...(load === null ? {} : { load }),
        seconds: Math.round((Date.now() - started) / 1000),
        machine: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model },
        ...(rounds > 1 ? { summary: summaries } : {}),
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
