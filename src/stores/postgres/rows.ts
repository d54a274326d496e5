/** Rows as the store reads them, and their mapping to the port's records and timer refs. */
import { HISTORY_LIMIT, type AttemptEntry } from '../../core/task/history.js';
import { laneOf, type TaskRecord, type TaskState, type TimerRef } from '../../core/task/model.js';

/** The columns every state decision needs; never the payload (it may be a MiB). */
export interface ControlRow {
  readonly seq: number;
  readonly topic: string;
  readonly state: TaskState;
  readonly run_at: number;
  readonly attempts: number;
  readonly max_attempts: number;
  readonly ttr_ms: number;
  readonly backoff_base_ms: number;
  readonly backoff_factor: number;
  readonly backoff_max_ms: number;
  readonly backoff_jitter: number;
  readonly receipt: string | null;
  readonly reserved_until: number | null;
  readonly url: string | null;
}

export interface TaskRow extends ControlRow {
  readonly id: string;
  readonly created_at: number;
  readonly updated_at: number;
  readonly last_error: string | null;
  readonly payload: string;
  /** The attempts (migration 0005): a jsonb array of [attempt, startedAt, durationMs, outcome, error]. */
  readonly history: unknown;
}

export interface DueRow {
  readonly id: string;
  readonly topic: string;
  readonly state: TaskState;
  readonly due_at: number;
  readonly seq: number;
  readonly receipt: string | null;
  readonly url: string | null;
}

export const CONTROL_COLUMNS =
  'seq, topic, state, run_at, attempts, max_attempts, ttr_ms, backoff_base_ms, backoff_factor, backoff_max_ms, backoff_jitter, receipt, reserved_until, url';

export const TASK_COLUMNS = `id, ${CONTROL_COLUMNS}, created_at, updated_at, last_error, payload, history`;

export function toRecord(row: TaskRow): TaskRecord {
  return {
    id: row.id,
    topic: row.topic,
    payload: row.payload,
    runAt: row.run_at,
    state: row.state,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    ttrMs: row.ttr_ms,
    backoff: backoffOf(row),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    receipt: row.receipt,
    reservedUntil: row.reserved_until,
    lastError: row.last_error,
    url: row.url,
    history: historyOf(row.history),
  };
}

/** The history column as entries; a value this version cannot read (or NULL) is an empty history. */
export function historyOf(value: unknown): AttemptEntry[] {
  if (!Array.isArray(value)) return [];
  return value.filter(Array.isArray).map((r: unknown[]) => ({
    attempt: Number(r[0]),
    startedAt: Number(r[1]),
    durationMs: Number(r[2]),
    outcome: String(r[3]),
    error: typeof r[4] === 'string' ? r[4] : null,
  }));
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

/** A task's lane (laneOf) in SQL: the topic, or '~push' for a task with its own push url (migration 0006 dropped the stored copy). */
export const LANE = `(CASE WHEN url IS NULL OR url = '' THEN topic ELSE '~push' END)`;

export function backoffOf(row: ControlRow): TaskRecord['backoff'] {
  return { baseMs: row.backoff_base_ms, factor: row.backoff_factor, maxMs: row.backoff_max_ms, jitter: row.backoff_jitter };
}

export function dueRef(row: DueRow): TimerRef {
  const kind = row.state === 'reserved' ? 'ttr' : 'run';
  return { id: row.id, topic: laneOf(row.topic, row.url), kind, dueAt: row.due_at, seq: row.seq, receipt: kind === 'ttr' ? row.receipt : null };
}

export function runRef(id: string, lane: string, runAt: number, seq: number): TimerRef {
  return { id, topic: lane, kind: 'run', dueAt: runAt, seq, receipt: null };
}
