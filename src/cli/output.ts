/** How the CLI prints: JSON with --json (one document per command), aligned tables otherwise. */
import { formatDuration } from './duration.js';

export interface Output {
  readonly json: boolean;
  /** A result: printed as JSON with --json, else by `human`. */
  result(value: unknown, human: () => string): void;
}

export function createOutput(json: boolean, write: (text: string) => void = (t) => process.stdout.write(t)): Output {
  return {
    json,
    result(value, human) {
      write(`${json ? JSON.stringify(value) : human()}\n`);
    },
  };
}

export function table(columns: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(columns), ...rows.map(line)].join('\n');
}

/** "2026-11-22T19:40:00.000Z (in 30s)" */
export function formatTime(ms: number | null, now = Date.now()): string {
  if (ms === null) return '-';
  const delta = ms - now;
  const relative = Math.abs(delta) < 1_000 ? 'now' : delta > 0 ? `in ${formatDuration(delta)}` : `${formatDuration(-delta)} ago`;
  return `${new Date(ms).toISOString()} (${relative})`;
}

export function keyValues(entries: readonly (readonly [string, string])[]): string {
  const width = Math.max(...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}
