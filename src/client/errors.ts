import type { AnyErrorCode } from '../wire/error-codes.js';

/**
 * Every failure of a client call: the server's error rebuilt from its code (see
 * docs/errors.md), or a client-side one (SERVER_UNREACHABLE, TIMEOUT, BAD_RESPONSE,
 * with status 0 when there was no answer). Branch on `code`, never on the message.
 */
export class DelayQClientError extends Error {
  constructor(
    readonly code: AnyErrorCode,
    message: string,
    /** The HTTP status, or 0 when no answer came. */
    readonly status: number,
    readonly details?: Readonly<Record<string, unknown>>,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'DelayQClientError';
  }
}

export function isDelayQClientError(error: unknown, code?: AnyErrorCode): error is DelayQClientError {
  return error instanceof DelayQClientError && (code === undefined || error.code === code);
}
