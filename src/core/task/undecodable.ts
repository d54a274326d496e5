/**
 * A row a store hands back that delayq cannot use: written around delayq (SQL with table
 * rights, a Redis client, a migration gone wrong), it holds a payload that is not JSON, an id
 * or a topic that is not a name, a number that is not one. Such a row is quarantined, never
 * fatal to its neighbours: the engine reads each record on its own (`decodeDelivery`,
 * `decodeTaskInfo`), and one it cannot read goes to `dead` with the lastError
 * `UNDECODABLE_ROW: <why>` (TaskStore.quarantine), while the others of the same reserve or
 * list are delivered and listed as usual, their attempts and receipts untouched. The row is
 * otherwise left as it is, for a person to mend and retry.
 *
 *   payload 'not json{'       ->  dead, lastError 'UNDECODABLE_ROW: its payload is not JSON'
 *   id 'bad id with spaces'   ->  dead, lastError 'UNDECODABLE_ROW: its id is not a name (A-Z a-z 0-9 . _ : -)'
 */
import { TASK_STATES, toDelivery, toTaskInfo, type Delivery, type ReservedTask, type TaskInfo, type TaskRecord, type TaskState } from './model.js';

export const UNDECODABLE_ROW = 'UNDECODABLE_ROW';

const NAME = /^[A-Za-z0-9._:-]+$/;
let lastGoodTopic = '';

/** A record read, or why it cannot be. */
export type Decoded<T> = { readonly value: T; readonly problem: null } | { readonly value: null; readonly problem: string };

/** The lastError of a quarantined task. */
export function undecodableError(problem: string): string {
  return `${UNDECODABLE_ROW}: ${problem}`;
}

const isWhole = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

/** What every record must hold for the engine to use it: names, and whole numbers where it counts (no allocation: a delivery's hot path). */
function problemOf(record: ReservedTask): string | null {
  if (typeof record.id !== 'string' || !NAME.test(record.id)) return 'its id is not a name (A-Z a-z 0-9 . _ : -)';
  // Deliveries come in runs of one topic: the last topic found good is not tested again.
  if (record.topic !== lastGoodTopic) {
    if (typeof record.topic !== 'string' || !NAME.test(record.topic)) return 'its topic is not a name (A-Z a-z 0-9 . _ : -)';
    lastGoodTopic = record.topic;
  }
  if (!isWhole(record.runAt)) return 'its runAt is not a whole number';
  if (!isWhole(record.attempts)) return 'its attempts is not a whole number';
  if (!isWhole(record.maxAttempts)) return 'its maxAttempts is not a whole number';
  return null;
}

const NOT_TEXT = { value: null, problem: 'its payload is not text' } as const;
const NOT_JSON = { value: null, problem: 'its payload is not JSON' } as const;

/** The delivery of a task just reserved (toDelivery), or why it cannot be one. */
export function decodeDelivery(record: ReservedTask): Decoded<Delivery> {
  const problem =
    problemOf(record) ??
    (!isWhole(record.reservedUntil) ? 'its reservedUntil is not a whole number' : typeof record.receipt === 'string' && record.receipt !== '' ? null : 'it has no receipt');
  if (problem !== null) return { value: null, problem };
  if (typeof record.payload !== 'string') return NOT_TEXT;
  try {
    return { value: toDelivery(record), problem: null };
  } catch {
    return NOT_JSON;
  }
}

/** A task as `get` shows it (toTaskInfo), or why it cannot be shown. */
export function decodeTaskInfo<P = unknown>(record: TaskRecord): Decoded<TaskInfo<P>> {
  const problem =
    problemOf(record) ??
    (!isWhole(record.ttrMs) ? 'its ttrMs is not a whole number'
      : !isWhole(record.createdAt) ? 'its createdAt is not a whole number'
      : !isWhole(record.updatedAt) ? 'its updatedAt is not a whole number'
      : TASK_STATES.includes(record.state) ? null
      : "its state is not one of delayq's");
  if (problem !== null) return { value: null, problem };
  if (typeof record.payload !== 'string') return NOT_TEXT;
  try {
    return { value: toTaskInfo<P>(record), problem: null };
  } catch {
    return NOT_JSON;
  }
}

/** States a quarantine moves to dead: the ones that would be delivered, or are. A finished task stays finished. */
export function isQuarantinable(state: TaskState): boolean {
  return state === 'pending' || state === 'reserved';
}

/**
 * Whether TaskStore.quarantine moves a task in `state`: a pending one when no receipt is
 * given (a read by get or list), a reserved one only under the receipt given (`holds`:
 * the reservation that read it is still the task's).
 */
export function mayQuarantine(state: TaskState | undefined, receipt: string | null, holds: boolean): boolean {
  return receipt === null ? state === 'pending' : state === 'reserved' && holds;
}

/**
 * How `get` and `list` show a task that cannot be read: its payload null, its numbers 0
 * where they are not numbers, its lastError saying why, and dead when the quarantine moved it.
 */
export function undecodableInfo<P = unknown>(record: TaskRecord, problem: string, now: number): TaskInfo<P> {
  const whole = (n: unknown): number => (isWhole(n) ? n : 0);
  const known = TASK_STATES.includes(record.state);
  const moved = !known || isQuarantinable(record.state);
  return {
    id: String(record.id),
    topic: String(record.topic),
    payload: null as P,
    runAt: whole(record.runAt),
    state: moved ? 'dead' : record.state,
    attempts: whole(record.attempts),
    maxAttempts: whole(record.maxAttempts),
    ttrMs: whole(record.ttrMs),
    backoff: record.backoff,
    createdAt: whole(record.createdAt),
    updatedAt: moved ? now : whole(record.updatedAt),
    reservedUntil: null,
    lastError: undecodableError(problem),
    url: typeof record.url === 'string' ? record.url : null,
    priority: whole(record.priority),
    history: Array.isArray(record.history) ? record.history : [],
  };
}
