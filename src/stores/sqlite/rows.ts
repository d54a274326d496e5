/** Rows as SQLite returns them (the shared SQL task rows, stores/shared/task-rows.ts), with the history column as JSON text. */
import type { AttemptEntry } from '../../core/task/history.js';
import type { TaskRecord } from '../../core/task/model.js';
import { historyEntries, recordOf, type TaskRowOf } from '../shared/task-rows.js';

export { backoffOf, CONTROL_COLUMNS, dueRef, runRef, TASK_COLUMNS, ttrRef, type ControlRow, type DueRow } from '../shared/task-rows.js';

/** A task row; `history` (migration 0011) is a JSON text, NULL for none yet. */
export type TaskRow = TaskRowOf<string | null>;

export function toRecord(row: TaskRow): TaskRecord {
  return recordOf(row, historyOf);
}

/** The history column as entries; a value this version cannot read is an empty history. */
export function historyOf(text: string | null): AttemptEntry[] {
  if (text === null) return [];
  try {
    return historyEntries(JSON.parse(text));
  } catch {
    return [];
  }
}
