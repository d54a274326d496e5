/**
 * A task's attempt history: its last HISTORY_LIMIT attempts, oldest first, each written by
 * the store in the same atomic change as the settlement that ended it (ack, nack, expire).
 * An attempt starts when its reservation is made: a store reads the start from the task's
 * `updatedAt`, which every store sets to the reservation time and leaves alone until the
 * settlement. A deferred reservation (defer) is not an attempt and leaves none.
 *
 * Bounded per task: at most HISTORY_LIMIT entries (the oldest dropped first), each error
 * cut to HISTORY_ERROR_LIMIT characters. Example: a task of maxAttempts 3 nacked twice
 * with "boom" then acked has history
 *   [{attempt 1, nacked, "boom"}, {attempt 2, nacked, "boom"}, {attempt 3, acked, null}].
 */

import { storableText } from '../text.js';

/** Entries kept per task. */
export const HISTORY_LIMIT = 10;
/** Characters of an error text kept in an entry (lastError keeps the whole text). */
export const HISTORY_ERROR_LIMIT = 500;

/**
 * How an attempt ended: `acked`, `nacked` (a consumer's nack or a failed handler),
 * `expired` (its ttr ran out), or for a push that failed `push:<class>` (`push:5xx`,
 * `push:4xx`, `push:429`, `push:3xx`, `push:timeout`, `push:connection`, ...). A push
 * answered 2xx is acked: `acked`.
 */
export type AttemptOutcome = string;

export interface AttemptEntry {
  /** 1 for the first delivery. */
  readonly attempt: number;
  /** When its reservation was made (ms since the epoch). */
  readonly startedAt: number;
  /** Until it was settled, in ms. */
  readonly durationMs: number;
  readonly outcome: AttemptOutcome;
  /** The error text, cut to HISTORY_ERROR_LIMIT characters; null for an ack. */
  readonly error: string | null;
}

/** The error as an entry keeps it: holdable by every store (storableText), HISTORY_ERROR_LIMIT characters at most. */
export function historyError(error: string | null | undefined): string | null {
  if (error === null || error === undefined || error === '') return null;
  return storableText(error, HISTORY_ERROR_LIMIT);
}

/** `history` with one more attempt, the oldest dropped beyond HISTORY_LIMIT (a new array). */
export function withAttempt(history: readonly AttemptEntry[], entry: AttemptEntry): AttemptEntry[] {
  const kept = history.length >= HISTORY_LIMIT ? history.slice(history.length - HISTORY_LIMIT + 1) : history.slice();
  // attemptEntry's entries are cut already: copied only when one is not.
  kept.push(entry.error !== null && entry.error.length > HISTORY_ERROR_LIMIT ? { ...entry, error: historyError(entry.error) } : entry);
  return kept;
}

/** The entry of the attempt a settlement at `now` ends (started at the reservation, `startedAt`). */
export function attemptEntry(attempt: number, startedAt: number, now: number, outcome: AttemptOutcome, error: string | null | undefined): AttemptEntry {
  return { attempt, startedAt, durationMs: Math.max(0, now - startedAt), outcome, error: historyError(error) };
}

/** The outcome of a push that did not ack, by its result class (core/push.ts PushResultClass). */
export function pushOutcome(result: string): AttemptOutcome {
  switch (result) {
    case 'http5xx':
      return 'push:5xx';
    case 'http4xx':
      return 'push:4xx';
    case 'http429':
      return 'push:429';
    case 'http3xx':
      return 'push:3xx';
    default:
      return `push:${result}`;
  }
}

/** An outcome as the stores accept it: short, printable, no ',' '|' or ':' (the Redis body's separators). */
export function isAttemptOutcome(outcome: string): boolean {
  return /^[a-z0-9]+(?::[a-z0-9]+)?$/.test(outcome) && outcome.length <= 24;
}
