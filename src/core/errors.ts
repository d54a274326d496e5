/**
 * Every error delayq raises carries a stable `code`: callers, the HTTP layer and the
 * client branch on the code, never on message text. The registry below is the source of
 * the library's codes; `docs/errors.md` and the client's copy (src/wire/error-codes.ts) are
 * checked against it by test/server/error-codes.test.ts.
 */
export const ERROR_CODES = {
  INVALID_ARGUMENT: 'a generic malformed argument (wrong type, unknown option, a `__proto__` or `constructor.prototype` key in a body or payload, named in the message)',
  INVALID_TOPIC: 'topic empty, longer than 200 characters or outside [A-Za-z0-9._:-]',
  INVALID_ID: 'id empty, longer than 256 characters or outside [A-Za-z0-9._:-]',
  INVALID_DELAY: 'delay or runAt not a finite non-negative integer, an ISO 8601 date-time with a field out of range (2030-02-30, 24:00), past the latest time a Date holds, too far in the future, or both given',
  INVALID_PAYLOAD: 'payload not JSON-serialisable',
  PAYLOAD_TOO_LARGE: 'serialised payload larger than the limit (1 MiB by default)',
  PAYLOAD_TOO_DEEP: 'payload nested deeper than the limit (128 levels of objects and arrays by default; `limits.maxPayloadDepth`)',
  INVALID_OPTION: 'ttrMs, maxAttempts, priority (an integer from -100 to 100), backoff, concurrency, max, waitMs, or a push subscription\'s timeoutMs or headers out of range',
  BATCH_TOO_LARGE: 'more tasks in one batch than the limit',
  TASK_NOT_FOUND: 'no task with this id',
  TASK_NOT_PENDING: 'the task is no longer pending (already delivered, done, dead or cancelled)',
  TASK_NOT_DEAD: 'retryDead was asked of a task that is not dead',
  STALE_RECEIPT: 'ack or nack with a receipt that is not the current reservation of the task (the ack that completed the task, sent again with its receipt, is not stale: it succeeds while the completed task is kept)',
  QUEUE_CLOSED: 'the queue is closing or closed',
  STORE_UNAVAILABLE: 'the store could not be reached or refused the operation',
  STORE_INCOMPATIBLE: 'the store was written by a newer delayq, is not a delayq store, or is misconfigured',
  SCHEMA_OUTDATED: "the PostgreSQL schema is not at this build's version: behind (the store URL says migrate=never, or the role may not migrate it: run `delayq migrate`) or ahead (migrated by a newer delayq)",
  STORE_LOCKED: 'the store is held by another live delayq process',
  INVALID_STORE_URL: 'the store URL is malformed or names an unknown kind of store',
  INVALID_URL: 'a push URL that is malformed, not http/https, or a destination the SSRF rules refuse (the reason is in the message)',
  INVALID_SECRET: 'a push secret not in the `whsec_` + base64 (24 to 64 bytes) format',
  PUSH_NOT_FOUND: 'the topic has no push subscription',
  PUSH_NO_SECRET: 'a task with its own push url on a topic without a push subscription, and no default push secret configured',
  INVALID_SCHEDULE: 'a recurring schedule with an invalid cron pattern or time zone (or one longer than 256 or 64 characters), both or neither of cron and everyMs, everyMs below 1000, a startAt or endAt that is no valid time (a field out of range, past the latest time a Date holds), endAt not after startAt or already past, no occurrence from now on, or a bad limit or misfire (the reason is in the message)',
  SCHEDULE_NOT_FOUND: 'no recurring schedule with this id',
  LIMITS_NOT_FOUND: 'the topic has no flow limits',
  RESERVATION_LOST: 'the reason of a `work` handler\'s signal when its reservation was lost: the store refused to extend it (settled or taken elsewhere), or it was not extended in time (a frozen process, the store out of reach); the task may be delivered again elsewhere',
  HANDLER_TIMEOUT: 'the reason of a `work` handler\'s signal when it ran past its `timeoutMs`: the attempt failed as `timeout`',
  WORKER_CLOSED: 'the reason of a `work` handler\'s signal when `worker.close({ timeoutMs })` (or the queue\'s) stopped waiting for it: its reservation was given back uncounted',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class DelayQError extends Error {
  readonly code: ErrorCode;
  /** Structured detail for callers (the offending field, a limit...); never needed to branch. */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DelayQError';
    this.code = code;
    this.details = details;
  }
}

export function isDelayQError(error: unknown, code?: ErrorCode): error is DelayQError {
  return error instanceof DelayQError && (code === undefined || error.code === code);
}
