/**
 * The decisions of the store port's check-then-change operations, made once for every
 * store: given what a store read of a task (or that it found none), whether the change
 * happens, to what, and what the caller is told. Pure: each store then writes the change
 * its own way (an object, an UPDATE), in the same transaction as its read. The Redis
 * scripts decide the same cases in Lua; the conformance suite holds all of them to it.
 */
import { MAX_ERROR_LENGTH, storableText } from '../text.js';
import { backoffDelay } from './backoff.js';
import { afterFailure, nextState, type TaskEvent } from './lifecycle.js';
import type { ExpireOutcome, NackOutcome } from '../ports/tasks.js';
import type { BackoffPolicy, TaskState } from './model.js';

/**
 * May `event` move a task in `state` (undefined: there is no such task)? 'go', or what the
 * caller is told instead: 'not_found', or `refused` (the port's word for the wrong state).
 */
export function decideMove<R extends string>(state: TaskState | undefined, event: TaskEvent, refused: R): 'go' | 'not_found' | R {
  if (state === undefined) return 'not_found';
  return nextState(state, event) === undefined ? refused : 'go';
}

/** What a store read of a reserved task to settle a failed attempt. */
export interface AttemptFacts {
  readonly state: TaskState;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly backoff: BackoffPolicy;
  /** When the current reservation runs out (NaN or null when the store keeps none). */
  readonly reservedUntil: number | null;
}

/** Why an attempt failed: the consumer said so (nack), or its reservation ran out (expire). */
export type FailureCause =
  | { readonly kind: 'nack'; readonly delayMs?: number | undefined; readonly error?: string | undefined; readonly outcome?: string | undefined; readonly random: number }
  | { readonly kind: 'expire' };

/** How the failed attempt ended, for its history entry: `expired`, the nack's outcome, or `nacked`. */
export function failureOutcome(cause: FailureCause): string {
  return cause.kind === 'expire' ? 'expired' : (cause.outcome ?? 'nacked');
}

/** The message a task keeps when its reservation ran out. */
export const EXPIRED_ERROR = 'reservation expired (ttr)';

export type FailureDecision =
  | { readonly status: 'not_found' }
  | { readonly status: 'stale' }
  /** An expiry of a reservation in force (it was extended): it runs until `reservedUntil`. */
  | { readonly status: 'held'; readonly reservedUntil: number }
  | { readonly status: 'retrying'; readonly runAt: number; readonly error: string | null }
  | { readonly status: 'dead'; readonly error: string | null };

/**
 * A failed attempt (nack, or expiry of the reservation): refused unless the task is
 * reserved under the receipt given (`holds`, checked by the store, whose receipts are its
 * own) and, for an expiry, its reservation has run out (else it is `held`: extended since
 * its timer was set); then retried after the backoff (or the nack's delayMs) while
 * attempts remain, else dead.
 */
export function decideFailure(task: AttemptFacts | undefined, holds: boolean, now: number, cause: FailureCause): FailureDecision {
  if (task === undefined) return { status: 'not_found' };
  if (task.state !== 'reserved' || !holds) return { status: 'stale' };
  if (cause.kind === 'expire' && (task.reservedUntil ?? Number.POSITIVE_INFINITY) > now) {
    return task.reservedUntil === null || Number.isNaN(task.reservedUntil) ? { status: 'stale' } : { status: 'held', reservedUntil: task.reservedUntil };
  }
  // A store may be handed any text (delayq/testing's callers): kept as every store can hold it.
  const error = cause.kind === 'expire' ? EXPIRED_ERROR : cause.error === undefined ? null : storableText(cause.error, MAX_ERROR_LENGTH);
  if (afterFailure(task.attempts, task.maxAttempts) === 'bury') return { status: 'dead', error };
  const delay = cause.kind === 'expire' ? 0 : (cause.delayMs ?? backoffDelay(task.backoff, task.attempts, () => cause.random));
  return { status: 'retrying', runAt: now + delay, error };
}

/**
 * Extending a reservation: only one in force, reserved under the receipt given and not run
 * out by `now` (a reservation that ran out is lost even before anyone expires it: another
 * process may be about to). The new end is `now + ttrMs`.
 */
export function decideExtend(task: { readonly state: TaskState; readonly reservedUntil: number | null } | undefined, holds: boolean, now: number): 'go' | 'not_found' | 'stale' {
  if (task === undefined) return 'not_found';
  return task.state === 'reserved' && holds && task.reservedUntil !== null && task.reservedUntil > now ? 'go' : 'stale';
}

/** Giving a reservation back uncounted (defer): refused unless reserved under the receipt. */
export function decideDefer(state: TaskState | undefined, holds: boolean): 'go' | 'not_found' | 'stale' {
  if (state === undefined) return 'not_found';
  return state === 'reserved' && holds ? 'go' : 'stale';
}

/**
 * decideMove on what a store read (undefined: no such task): the task itself when `event`
 * may move it, else what the caller is told. A store writes `if (typeof t === 'string')
 * return t;` and goes on with the task narrowed.
 */
export function movableOr<T extends { readonly state: TaskState }, R extends string>(task: T | undefined, event: TaskEvent, refused: R): T | 'not_found' | R {
  const decision = decideMove(task?.state, event, refused);
  return decision === 'go' ? task! : decision;
}

/** decideDefer on what a store read, in the same form as movableOr. */
export function deferrableOr<T extends { readonly state: TaskState }>(task: T | undefined, holds: boolean): T | 'not_found' | 'stale' {
  const decision = decideDefer(task?.state, holds);
  return decision === 'go' ? task! : decision;
}

/** A nack's outcome from a store's shared failure path: only an expiry is ever `held`. */
export function nackOutcomeOf(outcome: ExpireOutcome): NackOutcome {
  if (outcome.status === 'held') throw new Error('a nack was answered as held: only an expiry of an extended reservation is');
  return outcome;
}
