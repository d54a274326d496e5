/** Rows as the store reads them (the shared SQL task rows, stores/shared/task-rows.ts), and the SQL that writes them. */
import { HISTORY_LIMIT } from '../../core/task/history.js';
import type { TaskRecord } from '../../core/task/model.js';
import { historyEntries, recordOf, type TaskRowOf } from '../shared/task-rows.js';
import { STORED_DEFAULTS } from './migrations/0009_default_nulls.js';

export { backoffOf, dueRef, historyEntries as historyOf, runRef, type ControlRow, type DueRow } from '../shared/task-rows.js';

type UsualColumn = keyof typeof STORED_DEFAULTS;

/** The SQL of `column` of the row `t` names (`t.` or ''), NULL read as its usual value (migration 0009). */
export function orUsual(t: string, column: UsualColumn): string {
  return `coalesce(${t}${column}, ${STORED_DEFAULTS[column]})`;
}

/** The shared CONTROL_COLUMNS (stores/shared/task-rows.ts) as this store's rows keep them. */
export const CONTROL_COLUMNS = `seq, topic, state, run_at, ${(Object.keys(STORED_DEFAULTS) as UsualColumn[])
  .map((column) => `${orUsual('', column)} AS ${column}`)
  .join(', ')}, receipt, reserved_until, url`;

/** The shared TASK_COLUMNS as this store's rows keep them. */
export const TASK_COLUMNS = `id, ${CONTROL_COLUMNS}, created_at, coalesce(updated_at, created_at) AS updated_at, last_error, payload, history`;

/** `value` as a policy column stores it: NULL for the value STORED_DEFAULTS gives it. */
export function storedOrNull(value: number, usual: number): number | null {
  return value === usual ? null : value;
}

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
  const started = `coalesce(${t}updated_at, ${t}created_at)`;
  return `history = (CASE WHEN jsonb_array_length(${t}history) >= ${HISTORY_LIMIT} THEN ${t}history - 0 ELSE coalesce(${t}history, '[]'::jsonb) END)
         || jsonb_build_array(jsonb_build_array(${orUsual(t, 'attempts')}, ${started}, greatest(0, ${now} - ${started}), ${outcome}, ${error}))`;
}


/**
 * The SET of a reservation: pending -> reserved at `now` for `ttr` (NULL: the task's own),
 * the attempt counted; a receipt is `<attempts>.<nonce><seq>`, so no two reservations share
 * one. `t` names the row; `now`, `nonce` and `ttr` are parameters.
 */
export function reservation(t: string, now: string, nonce: string, ttr: string): string {
  const until = `${now}::bigint + coalesce(${ttr}::bigint, ${orUsual(t, 'ttr_ms')})`;
  return `state = 'reserved', attempts = ${orUsual(t, 'attempts')} + 1, receipt = (${orUsual(t, 'attempts')} + 1)::text || '.' || ${nonce}::text || ${t}seq::text,
              reserved_until = ${until}, due_at = ${until}, updated_at = ${now}`;
}
