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

/** A record read, or why it cannot be. */
export type Decoded<T> = { readonly value: T; readonly problem: null } | { readonly value: null; readonly problem: string };

/** The lastError of a quarantined task. */
export function undecodableError(problem: string): string {
  return `${UNDECODABLE_ROW}: ${problem}`;
}

const isWhole = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

/** What every record must hold for the engine to use it: names, and whole numbers where it counts. */
function problemOf(record: ReservedTask, more: readonly (readonly [string, unknown])[]): string | null {
  if (typeof record.id !== 'string' || !NAME.test(record.id)) return 'its id is not a name (A-Z a-z 0-9 . _ : -)';
  if (typeof record.topic !== 'string' || !NAME.test(record.topic)) return 'its topic is not a name (A-Z a-z 0-9 . _ : -)';
  for (const [field, value] of [['runAt', record.runAt], ['attempts', record.attempts], ['maxAttempts', record.maxAttempts], ...more] as const)
    if (!isWhole(value)) return `its ${field} is not a whole number`;
  return null;
}

/** `read(record)` (which parses the payload), or why the payload is not JSON. */
function withPayload<T>(record: { readonly payload: unknown }, read: () => T): Decoded<T> {
  if (typeof record.payload !== 'string') return { value: null, problem: 'its payload is not text' };
  try {
    return { value: read(), problem: null };
  } catch {
    return { value: null, problem: 'its payload is not JSON' };
  }
}

/** The delivery of a task just reserved (toDelivery), or why it cannot be one. */
export function decodeDelivery(record: ReservedTask): Decoded<Delivery> {
  const problem = problemOf(record, [['reservedUntil', record.reservedUntil]]) ?? (typeof record.receipt === 'string' && record.receipt !== '' ? null : 'it has no receipt');
  return problem !== null ? { value: null, problem } : withPayload(record, () => toDelivery(record));
}

/** A task as `get` shows it (toTaskInfo), or why it cannot be shown. */
export function decodeTaskInfo<P = unknown>(record: TaskRecord): Decoded<TaskInfo<P>> {
  const problem =
    problemOf(record, [
      ['ttrMs', record.ttrMs],
      ['createdAt', record.createdAt],
      ['updatedAt', record.updatedAt],
    ]) ?? (TASK_STATES.includes(record.state) ? null : "its state is not one of delayq's");
  return problem !== null ? { value: null, problem } : withPayload(record, () => toTaskInfo<P>(record));
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
    history: Array.isArray(record.history) ? record.history : [],
  };
}
