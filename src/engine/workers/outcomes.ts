/**
 * How a handler's run ended, as a worker settles it: ok, or failed with an error. Two errors
 * say more than "failed": RetryAfter names when to retry, DeferTo gives the reservation back
 * uncounted.
 */
export type Outcome = { readonly ok: true } | { readonly ok: false; readonly error: unknown };

/**
 * A handler failure that names when to retry (the pusher's, for a receiver's Retry-After);
 * null: the task's backoff. The engine's own: `work` handlers throw plain errors. `outcome`
 * is how the attempt ended for its history entry (the pusher's `push:<class>`).
 */
export class RetryAfter extends Error {
  constructor(
    message: string,
    readonly delayMs: number | null,
    readonly outcome?: string,
  ) {
    super(message);
    this.name = 'RetryAfter';
  }
}

/**
 * Thrown by a handler to give its reservation back uncounted, to be delivered again at
 * `runAt` (the store's `defer`): the Pusher's circuit breaker holds a push back this way.
 */
export class DeferTo extends Error {
  constructor(
    message: string,
    readonly runAt: number,
  ) {
    super(message);
    this.name = 'DeferTo';
  }
}
