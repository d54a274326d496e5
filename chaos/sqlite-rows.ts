/**
 * Where the checker's offending tasks stand in a SQLite store, read with better-sqlite3
 * straight from the file, so a loss can be told apart from a missing fact:
 *
 *   no row                      the acknowledged schedule is not in the store: a real loss
 *   completed, acked_receipt    delivered and acked: the delivery happened, its fact is missing
 *   pending, park_bucket        parked: never moved to the due index
 *   pending / reserved, due     still owed: the drain ended before it came (or nothing fires it)
 *
 * `standings` reads a copy of the files, so the kept database stays as the crash left it
 * (opening a WAL database writes to it: recovery, a checkpoint at close). `owed` reads the
 * live file of a running store read-only, one short statement at a time, so it never pins
 * the WAL.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import Database from 'better-sqlite3';
import { decodeSeqs } from '../src/stores/sqlite/seq-runs.js';

export interface TaskRow {
  readonly seq: number;
  readonly state: string;
  readonly run_at: number;
  readonly due_at: number | null;
  readonly park_bucket: number | null;
  readonly attempts: number;
  readonly receipt: string | null;
  readonly acked_receipt: string | null;
  readonly reserved_until: number | null;
  readonly created_at: number;
  readonly updated_at: number;
  readonly last_error: string | null;
}

export interface Standing {
  readonly id: string;
  readonly row: TaskRow | null;
  /** Whether a run of parked_runs names the row's seq (a parked task should be in one). */
  readonly inParkedRun: boolean;
  /** The stored frontier of parking (parking_state), if the file has one. */
  readonly frontier: number | null;
  /** The row read in words (see the header). */
  readonly reading: string;
}

const ROW = 'SELECT seq, state, run_at, due_at, park_bucket, attempts, receipt, acked_receipt, reserved_until, created_at, updated_at, last_error FROM tasks WHERE id = ?';

/** The standing of each id in the database `file` (closed by every process), `checkedAt` the time of the check. */
export function standings(file: string, ids: readonly string[], checkedAt: number): Standing[] {
  const scratch = mkdtempSync(join(tmpdir(), 'delayq-chaos-rows-'));
  try {
    const copy = join(scratch, basename(file));
    copyFileSync(file, copy);
    if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${copy}-wal`);
    const db = new Database(copy);
    try {
      const read = db.prepare<[string], TaskRow>(ROW);
      const frontier = (db.prepare('SELECT frontier FROM parking_state').pluck().get() as number | undefined) ?? null;
      const parked = new Set<number>();
      for (const seqs of db.prepare('SELECT seqs FROM parked_runs').pluck().all() as Buffer[]) for (const seq of decodeSeqs(seqs)) parked.add(seq);
      return ids.map((id) => {
        const row = read.get(id) ?? null;
        const inParkedRun = row !== null && parked.has(row.seq);
        return { id, row, inParkedRun, frontier, reading: readRow(row, inParkedRun, frontier, checkedAt) };
      });
    } finally {
      db.close();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * How many of `ids` a running store still owes a delivery (pending or reserved), or null
 * when the file cannot be read now (not created yet, busy).
 */
export function owed(file: string, ids: readonly string[]): number | null {
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, timeout: 1_000 });
    const state = db.prepare<[string], string>('SELECT state FROM tasks WHERE id = ?').pluck();
    let n = 0;
    for (const id of ids) {
      const s = state.get(id);
      if (s === 'pending' || s === 'reserved') n++;
    }
    return n;
  } catch {
    return null;
  } finally {
    db?.close();
  }
}

function readRow(row: TaskRow | null, inParkedRun: boolean, frontier: number | null, checkedAt: number): string {
  if (row === null) return 'no row: the acknowledged schedule is not in the store (a real loss)';
  const ago = (at: number | null): string => (at === null ? '-' : at <= checkedAt ? `${checkedAt - at} ms before the check` : `${at - checkedAt} ms after the check`);
  switch (row.state) {
    case 'completed':
      return row.acked_receipt === null
        ? `completed without an acked receipt (updated ${ago(row.updated_at)})`
        : `completed by receipt ${row.acked_receipt} (attempt ${row.attempts}, acked ${ago(row.updated_at)}): delivered and acked, its delivery fact is missing`;
    case 'pending':
      return row.park_bucket !== null
        ? `pending, parked in bucket ${row.park_bucket} (stored frontier ${frontier ?? '-'}), ${inParkedRun ? 'in a parked run' : 'in no parked run'}; runAt ${ago(row.run_at)}`
        : `pending, due ${ago(row.due_at)}, ${row.attempts} attempts so far: still owed`;
    case 'reserved':
      return `reserved (attempt ${row.attempts}, receipt ${row.receipt ?? '-'}) until ${ago(row.reserved_until)}: still owed`;
    default:
      return `${row.state} after ${row.attempts} attempts (${row.last_error ?? 'no error'}, ${ago(row.updated_at)})`;
  }
}
