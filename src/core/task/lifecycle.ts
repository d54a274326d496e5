/**
 * The task state machine. Every store applies exactly these transitions (and refuses
 * anything else); the engine never changes a state except through one of them. The memory
 * store, the reference implementation of the port, makes each change through `nextState`;
 * the SQLite statements and the Redis scripts spell the same table in their own language,
 * and the conformance suite holds all three to it.
 *
 *   schedule ──> pending ──reserve (runAt<=now)──> reserved ──ack──> completed
 *                 │  ^  ^                            │   │
 *           cancel│  │  └──nack / ttr expiry, ───────┘   └──nack / ttr expiry,
 *                 v  │     attempts < max                    attempts >= max ──> dead
 *            cancelled  └──────────── retryDead (by the user) ─────────────────────┘
 *                 ^                                                                  │
 *                 └──────────────────── cancelDead (by the user) ────────────────────┘
 *
 * A task whose row cannot be read (core/task/undecodable.ts) is quarantined: pending or
 * reserved -> dead, with lastError UNDECODABLE_ROW.
 *
 * `reschedule` moves a pending task's runAt and keeps it pending. `defer` gives a
 * reservation back uncounted (reserved -> pending at a later runAt, attempts - 1): the push
 * circuit breaker's way to hold a task back without spending its attempt. A receipt names one
 * reservation: ack / nack / expiry with any other receipt are refused (fencing), so a slow
 * first attempt can never complete or fail a later one.
 */
import type { TaskState } from './model.js';

/** What moves a task: the port's verbs, with a failed attempt (nack, expire) as retry or bury. */
export type TaskEvent = 'reserve' | 'ack' | 'retry' | 'bury' | 'cancel' | 'reschedule' | 'retryDead' | 'defer' | 'cancelDead' | 'quarantine';

const TRANSITIONS: Readonly<Record<TaskEvent, Partial<Record<TaskState, TaskState>>>> = {
  reserve: { pending: 'reserved' },
  ack: { reserved: 'completed' },
  retry: { reserved: 'pending' },
  bury: { reserved: 'dead' },
  cancel: { pending: 'cancelled' },
  reschedule: { pending: 'pending' },
  retryDead: { dead: 'pending' },
  defer: { reserved: 'pending' },
  // A dead task the operator gives up on: finished, purged after the retention like any cancelled one.
  cancelDead: { dead: 'cancelled' },
  // A row the engine cannot read (core/task/undecodable.ts): out of delivery, kept for a person to mend.
  quarantine: { pending: 'dead', reserved: 'dead' },
};

/** The state after `event`, or undefined when the event is not allowed in `state`. */
export function nextState(state: TaskState, event: TaskEvent): TaskState | undefined {
  return TRANSITIONS[event][state];
}

/** After a failed or expired attempt: retry while attempts remain, else the task is dead. */
export function afterFailure(attempts: number, maxAttempts: number): 'retry' | 'bury' {
  return attempts >= maxAttempts ? 'bury' : 'retry';
}

/**
 * A fencing token for the `attempt`-th reservation of a task. The attempt number makes
 * receipts of different reservations differ even if `nonce` repeats; the nonce makes them
 * unguessable across restarts.
 */
export function makeReceipt(attempt: number, nonce: string): string {
  return `${attempt}.${nonce}`;
}
