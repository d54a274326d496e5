/**
 * The order the runner starts test files in: longest first, by the seconds each took in a
 * recorded run (scripts/test-durations.json, written by `run-tests.ts --record-durations`).
 *
 * node --test starts files in the order it is given them, two at a time
 * (--test-concurrency=2). In path order the slowest files (the store suites under
 * test/stores/) came last, and one of them kept a core busy alone for a minute or more at
 * the end of the run while the other core sat idle. Started first, they overlap the many
 * short files instead. A file with no record (new, or renamed) starts first of all: its
 * length is unknown, and a short file started early costs nothing.
 *
 * The record is a hint for the order only: a stale or missing one changes no test and no
 * result, only how well the two cores are kept busy.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

export const DURATIONS_FILE = resolve(import.meta.dirname, 'test-durations.json');

/** Seconds per test file path (relative to the repository, `test/...`). */
export type Durations = ReadonlyMap<string, number>;

/** The recorded durations; none (an empty map) if the file is missing or unreadable. */
export function readDurations(path = DURATIONS_FILE): Durations {
  if (!existsSync(path)) return new Map();
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return new Map();
    return new Map(Object.entries(parsed).filter((entry): entry is [string, number] => typeof entry[1] === 'number' && Number.isFinite(entry[1])));
  } catch {
    return new Map();
  }
}

/** `files` with those never recorded first (in their given order), then the rest longest first. */
export function longestFirst<T extends { readonly file: string }>(files: readonly T[], durations: Durations): T[] {
  const unknown = files.filter(({ file }) => !durations.has(file));
  const known = files.filter(({ file }) => durations.has(file)).sort((a, b) => durations.get(b.file)! - durations.get(a.file)! || a.file.localeCompare(b.file));
  return [...unknown, ...known];
}

/** Writes `recorded` over the durations kept so far (files not run this time keep theirs), sorted by path. */
export function saveDurations(recorded: Durations, path = DURATIONS_FILE): void {
  const merged = new Map([...readDurations(path), ...recorded]);
  const sorted = Object.fromEntries([...merged].sort(([a], [b]) => a.localeCompare(b)).map(([file, seconds]) => [file, Math.round(seconds * 10) / 10]));
  writeFileSync(path, `${JSON.stringify(sorted, null, 2)}\n`);
}
