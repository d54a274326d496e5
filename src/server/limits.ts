/** The server's limits. Each is configurable (flags and env in config.ts) and each has an error code. */
export interface ServerLimits {
  /** Largest serialised payload, in bytes (PAYLOAD_TOO_LARGE, 413). Also given to the queue. */
  readonly maxPayloadBytes: number;
  /** Room for the rest of a request around its payload: the body limit is payload + this (BODY_TOO_LARGE, 413). */
  readonly envelopeBytes: number;
  /** Tasks in one batch (BATCH_TOO_LARGE, 413). Also given to the queue. */
  readonly maxBatch: number;
  /** Body limit of POST /v1/tasks/batch (BODY_TOO_LARGE, 413). */
  readonly maxBatchBodyBytes: number;
  /** Longest delay from now (INVALID_DELAY, 400). Also given to the queue. */
  readonly maxDelayMs: number;
  /** Most tasks in one reserve (INVALID_OPTION, 400); the library caps it at 1,000. */
  readonly maxReserve: number;
  /** Longest reserve long-poll (INVALID_OPTION, 400); the library caps it at 60 s. */
  readonly maxWaitMs: number;
  /** Long-polls waiting at once (TOO_MANY_LONG_POLLS, 429). */
  readonly maxLongPolls: number;
}

export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  maxPayloadBytes: 1024 * 1024,
  envelopeBytes: 64 * 1024,
  maxBatch: 10_000,
  maxBatchBodyBytes: 32 * 1024 * 1024,
  maxDelayMs: Math.round(10 * 365.25 * 24 * 3600 * 1000),
  maxReserve: 1_000,
  maxWaitMs: 60_000,
  maxLongPolls: 10_000,
};
