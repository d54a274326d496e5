/**
 * Shared output of every benchmark: a table on stdout and a JSON file,
 * bench/results/<name>-latest.json, overwritten by each run (earlier runs live in git history).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

export type Cell = string | number | null;
export interface Table {
  readonly title: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly Cell[])[];
  readonly notes?: readonly string[];
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value) || Math.abs(value) >= 1_000) return Math.round(value).toLocaleString('en-US');
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

export function printTable(table: Table): void {
  const cells = table.rows.map((row) => row.map((c) => (c === null ? '-' : typeof c === 'number' ? formatNumber(c) : c)));
  const widths = table.columns.map((col, i) => Math.max(col.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (values: readonly string[]): string => `| ${values.map((v, i) => v.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  console.log(`\n### ${table.title}\n`);
  console.log(line(table.columns));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of cells) console.log(line(row));
  for (const note of table.notes ?? []) console.log(`\n${note}`);
}

export function writeResults(name: string, tables: readonly Table[], extra: Record<string, unknown> = {}): string {
  const dir = join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const body = JSON.stringify(
    {
      name,
      at: new Date().toISOString(),
      machine: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model, memGiB: Math.round(totalmem() / 2 ** 30) },
      tables,
      ...extra,
    },
    null,
    2,
  );
  const file = join(dir, `${name}-latest.json`);
  writeFileSync(file, body);
  return file;
}

/** Percentile of an ascending-sorted array (nearest rank). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Epoch ms with sub-ms resolution, comparable with Date.now()-based runAt values. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}
