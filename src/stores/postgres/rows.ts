/** Rows as the store reads them (the shared SQL task rows, stores/shared/task-rows.ts), and the SQL that writes them. */
import { HISTORY_LIMIT } from '../../core/task/history.js';
import type { TaskRecord } from '../../core/task/model.js';
import { historyEntries, recordOf, type TaskRowOf } from '../shared/task-rows.js';

export { backoffOf, CONTROL_COLUMNS, dueRef, historyEntries as historyOf, runRef, TASK_COLUMNS, type ControlRow, type DueRow } from '../shared/task-rows.js';

/** A task row; `history` (migration 0005) is a jsonb value as the driver parses it, NULL until the first attempt settles (0006). */
export type TaskRow = TaskRowOf<unknown>;

export function toRecord(row: TaskRow): TaskRecord {
  return recordOf(row, historyEntries);
}

/**
 * `history = ...` of a settlement (migration 0005): the attempt's entry appended, the oldest
 * dropped beyond HISTORY_LIMIT. `t` names the tasks row; `now`, `outcome` and `error` are SQL
 * expressions (parameters, cast). Read in the SET of the settling UPDATE, `attempts` and
 * `updated_at` are the row as it was: the attempt's number and its reservation's time. The
 * error is cut already (historyError).
 */
export function historyAppend(t: string, now: string, outcome: string, error: string): string {
  return `history = (CASE WHEN jsonb_array_length(${t}history) >= ${HISTORY_LIMIT} THEN ${t}history - 0 ELSE coalesce(${t}history, '[]'::jsonb) END)
         || jsonb_build_array(jsonb_build_array(${t}attempts, ${t}updated_at, greatest(0, ${now} - ${t}updated_at), ${outcome}, ${error}))`;
}

