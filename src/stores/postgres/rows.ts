/** Rows as the store reads them (the shared SQL task rows, stores/shared/task-rows.ts), and the values its writes store. */
import type { TaskRecord } from '../../core/task/model.js';
import { historyEntries, recordOf, type TaskRowOf } from '../shared/task-rows.js';

export { backoffOf, dueRef, historyEntries as historyOf, runRef, ttrRef, type ControlRow, type DueRow } from '../shared/task-rows.js';

/**
 * What a NULL in a task's column means (migration 0009, ADR 0049): the usual value, stored as
 * NULL. The same in every schema at version 9 or later, so it never changes: were the
 * engine's defaults to change, tasks would store the new values explicitly. The statements
 * read them back with these literals (`coalesce(max_attempts, 5)`, sql/includes/); a test
 * keeps the two in step.
 */
export const STORED_DEFAULTS = {
  attempts: 0,
  max_attempts: 5,
  ttr_ms: 30_000,
  backoff_base_ms: 1_000,
  backoff_factor: 2,
  backoff_max_ms: 3_600_000,
  backoff_jitter: 0.2,
} as const;

/** `value` as a policy column stores it: NULL for the value STORED_DEFAULTS gives it. */
export function storedOrNull(value: number, usual: number): number | null {
  return value === usual ? null : value;
}

/** A task row; `history` (migration 0005) is a jsonb value as the driver parses it, NULL until the first attempt settles (0006). */
export type TaskRow = TaskRowOf<unknown>;

export function toRecord(row: TaskRow): TaskRecord {
  return recordOf(row, historyEntries);
}
