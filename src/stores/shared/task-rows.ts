/**
 * The task rows of the SQL stores (SQLite, PostgreSQL), which keep the same columns under the
 * same names, and their mapping to the port's records and timer refs. Each store reads its
 * `history` column in its own form (a JSON text, a jsonb value) and hands the parsed value to
 * `historyEntries`.
 */
import type { AttemptEntry } from '../../core/task/history.js';
import { MAX_PRIORITY, MIN_PRIORITY } from '../../core/task/validate.js';
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
  /** The task's own push target, NULL for none. */
  readonly url: string | null;
  /** The task's priority (0 for none; ADR 0057); absent where a statement does not read it. */
  readonly priority?: number;
}

/** A whole task row; `H` is the history column as the driver returns it. */
export interface TaskRowOf<H> extends ControlRow {
  readonly id: string;
  readonly created_at: number;
  readonly updated_at: number;
  readonly last_error: string | null;
  readonly payload: string;
  /** The scheduling call's trace context (TaskRecord.trace), NULL for none. */
  readonly trace: string | null;
  /** The attempts: an array of [attempt, startedAt, durationMs, outcome, error], in the store's form; NULL for none yet. */
  readonly history: H;
}

export interface DueRow {
  readonly id: string;
  readonly topic: string;
  readonly state: TaskState;
  readonly due_at: number;
  readonly seq: number;
  readonly receipt: string | null;
  readonly url: string | null;
  /** Read by the stores whose run refs carry it (local dispatch: TimerRef.priority). */
  readonly priority?: number;
}

export const CONTROL_COLUMNS =
  'seq, topic, state, run_at, attempts, max_attempts, ttr_ms, backoff_base_ms, backoff_factor, backoff_max_ms, backoff_jitter, receipt, reserved_until, url, priority';

export const TASK_COLUMNS = `id, ${CONTROL_COLUMNS}, created_at, updated_at, last_error, payload, trace, history`;

/** The record of a row, its history read by the store's `historyOf`. */
export function recordOf<H>(row: TaskRowOf<H>, historyOf: (value: H) => AttemptEntry[]): TaskRecord {
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
    trace: row.trace,
    priority: priorityOf(row.priority),
    history: historyOf(row.history),
  };
}

/** Parsed history entries; anything this version cannot read is an empty history. */
export function historyEntries(value: unknown): AttemptEntry[] {
  if (!Array.isArray(value)) return [];
  return value.filter(Array.isArray).map((r: unknown[]) => ({
    attempt: Number(r[0]),
    startedAt: Number(r[1]),
    durationMs: Number(r[2]),
    outcome: String(r[3]),
    error: typeof r[4] === 'string' ? r[4] : null,
  }));
}

export function backoffOf(row: ControlRow): TaskRecord['backoff'] {
  return { baseMs: row.backoff_base_ms, factor: row.backoff_factor, maxMs: row.backoff_max_ms, jitter: row.backoff_jitter };
}

export function dueRef(row: DueRow): TimerRef {
  const kind = row.state === 'reserved' ? 'ttr' : 'run';
  if (kind === 'run') return runRef(row.id, laneOf(row.topic, row.url), row.due_at, row.seq, row.priority);
  return { id: row.id, topic: laneOf(row.topic, row.url), kind, dueAt: row.due_at, seq: row.seq, receipt: row.receipt };
}

/**
 * A run ref; `lane` is laneOf(topic, url): the task's topic, or its topic's push lane for a
 * task with its own url. It carries the task's priority only when it is not 0 (TimerRef.priority).
 */
export function runRef(id: string, lane: string, runAt: number, seq: number, priority?: number): TimerRef {
  const level = priorityOf(priority);
  return level === 0 ? { id, topic: lane, kind: 'run', dueAt: runAt, seq, receipt: null } : { id, topic: lane, kind: 'run', dueAt: runAt, seq, receipt: null, priority: level };
}

/**
 * A priority column as read (a row is untrusted): an integer within the bounds, or 0 for
 * anything else, so that a row written around delayq orders as the default.
 */
export function priorityOf(value: unknown): number {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= MIN_PRIORITY && n <= MAX_PRIORITY ? n : 0;
}

/** The ttr timer of a reservation in force: its row as read, until `reservedUntil`. */
export function ttrRef(id: string, row: ControlRow, reservedUntil: number): TimerRef {
  return { id, topic: laneOf(row.topic, row.url), kind: 'ttr', dueAt: reservedUntil, seq: row.seq, receipt: row.receipt };
}
