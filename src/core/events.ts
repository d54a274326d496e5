/**
 * Lifecycle events (issue 49): what happened to a task, as the engine saw it settle in the
 * store. Pure: the types, the parsing of an event read back from a store (untrusted: a
 * stream entry, a row or a NOTIFY payload may have been written around delayq) and of a
 * caller's filter. No I/O.
 *
 * Every event has the task's `id`, its `topic`, the `attempt` it concerns and the time
 * `at` (ms since the epoch, the engine's clock). `attempt` is the delivery's attempt for
 * delivered, acked, failed and dead; 0 for scheduled and for a dead task retried
 * (rescheduled, attempts reset); null where the store's answer does not carry it (a
 * cancelled or rescheduled pending task).
 */
import { DelayQError } from './errors.js';
import { MAX_ERROR_LENGTH } from './text.js';

export const TASK_EVENT_TYPES = ['scheduled', 'delivered', 'acked', 'failed', 'dead', 'cancelled', 'rescheduled'] as const;
export type TaskEventType = (typeof TASK_EVENT_TYPES)[number];

export interface TaskEvent {
  readonly type: TaskEventType;
  /** The task's id. */
  readonly id: string;
  readonly topic: string;
  readonly attempt: number | null;
  /** When it happened (ms since the epoch). */
  readonly at: number;
  /** scheduled, rescheduled: the task's (new) runAt. */
  readonly runAt?: number;
  /** failed: when the next attempt is due. */
  readonly nextRunAt?: number;
  /** failed, dead: the attempt's error, as the task keeps it. */
  readonly error?: string;
}

/** Why events were lost: a full buffer (`overflow`), a failed write (`store`), an entry read back that is not an event (`invalid`). */
export type EventDropReason = 'overflow' | 'store' | 'invalid';

/** An event as a log hands it back: with its id in the log, the cursor to resume after. */
export interface LoggedTaskEvent extends TaskEvent {
  readonly eventId: string;
}

/** The events a shared store's log keeps (Redis: about as many; PostgreSQL: at least as many, trimmed in steps). */
export const EVENT_LOG_RETAIN = 100_000;

/** The longest task id or topic an event read back may carry (the engine's own limits are lower by default). */
const MAX_NAME = 1_024;
/** The longest encoded event a log entry may hold: bigger is not one of ours. */
export const MAX_EVENT_BYTES = 16 * 1_024;
const NAME = /^[A-Za-z0-9._:~-]+$/;
const TYPES: ReadonlySet<string> = new Set(TASK_EVENT_TYPES);

export function isTaskEventType(value: unknown): value is TaskEventType {
  return typeof value === 'string' && TYPES.has(value);
}

const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isName = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_NAME && NAME.test(v);

/** The JSON a log keeps for one event (fields in a fixed order, absent ones left out). */
export function encodeTaskEvent(event: TaskEvent): string {
  return JSON.stringify(event);
}

/**
 * One event read back from a log, checked field by field; null for anything that is not an
 * event delayq wrote (the caller drops and counts it). Unknown fields are left out.
 */
export function decodeTaskEvent(raw: unknown): TaskEvent | null {
  let value: unknown = raw;
  if (typeof raw === 'string') {
    if (raw.length > MAX_EVENT_BYTES) return null;
    try {
      value = JSON.parse(raw);
    } catch {
      return null;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const v = value as Partial<Record<keyof TaskEvent, unknown>>;
  if (!isTaskEventType(v.type) || !isName(v.id) || !isName(v.topic) || !isTime(v.at)) return null;
  if (v.attempt !== null && !isTime(v.attempt)) return null;
  if (v.runAt !== undefined && !isTime(v.runAt)) return null;
  if (v.nextRunAt !== undefined && !isTime(v.nextRunAt)) return null;
  if (v.error !== undefined && (typeof v.error !== 'string' || v.error.length > MAX_ERROR_LENGTH)) return null;
  return {
    type: v.type,
    id: v.id,
    topic: v.topic,
    attempt: v.attempt,
    at: v.at,
    ...(v.runAt === undefined ? {} : { runAt: v.runAt }),
    ...(v.nextRunAt === undefined ? {} : { nextRunAt: v.nextRunAt }),
    ...(v.error === undefined ? {} : { error: v.error }),
  };
}

/** The attempt a receipt names (`<attempt>.<nonce>`), or null. */
export function attemptOfReceipt(receipt: string): number | null {
  const dot = receipt.indexOf('.');
  const attempt = Number(dot < 0 ? NaN : receipt.slice(0, dot));
  return Number.isSafeInteger(attempt) && attempt >= 0 ? attempt : null;
}

/** What a subscriber asks for: one topic or all, some types or all. */
export interface TaskEventFilter {
  readonly topic: string | null;
  readonly types: ReadonlySet<TaskEventType> | null;
}

/** The most types a filter names (there are 7; a longer list repeats some). */
export const MAX_FILTER_TYPES = TASK_EVENT_TYPES.length;

/**
 * A caller's filter, checked: `topic` a topic name (its length bounded by `maxTopicLength`),
 * `types` a list (or a comma-separated string) of event types: INVALID_TOPIC, INVALID_ARGUMENT.
 */
export function parseTaskEventFilter(input: { readonly topic?: unknown; readonly types?: unknown }, maxTopicLength: number): TaskEventFilter {
  const { topic, types } = input;
  if (topic !== undefined && topic !== null && topic !== '') {
    if (typeof topic !== 'string' || topic.length > maxTopicLength || !NAME.test(topic) || topic.includes('~'))
      throw new DelayQError('INVALID_TOPIC', `topic: must be a topic name of at most ${maxTopicLength} characters`, { field: 'topic' });
  }
  let list: readonly unknown[] | null = null;
  if (typeof types === 'string') list = types === '' ? null : types.split(',');
  else if (Array.isArray(types)) list = types;
  else if (types !== undefined && types !== null) throw new DelayQError('INVALID_ARGUMENT', 'types: must be a list of event types', { field: 'types' });
  if (list !== null && list.length > MAX_FILTER_TYPES * 2)
    throw new DelayQError('INVALID_ARGUMENT', `types: at most ${MAX_FILTER_TYPES * 2} entries`, { field: 'types' });
  const set = new Set<TaskEventType>();
  for (const t of list ?? []) {
    if (!isTaskEventType(t)) throw new DelayQError('INVALID_ARGUMENT', `types: each must be one of ${TASK_EVENT_TYPES.join(', ')}`, { field: 'types' });
    set.add(t);
  }
  return { topic: typeof topic === 'string' && topic !== '' ? topic : null, types: set.size === 0 ? null : set };
}

export function matchesTaskEventFilter(event: TaskEvent, filter: TaskEventFilter): boolean {
  return (filter.topic === null || event.topic === filter.topic) && (filter.types === null || filter.types.has(event.type));
}
