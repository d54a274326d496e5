import { ENGINE_OPTIONS, numberDefault, SERVER_OPTIONS } from '../core/option-table/index.js';

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

/** The defaults, from the options table (src/core/option-table); envelopeBytes is not an option. */
export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  maxPayloadBytes: ENGINE_OPTIONS['limits.maxPayloadBytes'].default,
  envelopeBytes: 64 * 1024,
  maxBatch: ENGINE_OPTIONS['limits.maxBatch'].default,
  maxBatchBodyBytes: numberDefault(SERVER_OPTIONS.maxBatchBodyBytes),
  maxDelayMs: ENGINE_OPTIONS['limits.maxDelayMs'].default,
  maxReserve: numberDefault(SERVER_OPTIONS.maxReserve),
  maxWaitMs: numberDefault(SERVER_OPTIONS.maxWaitMs),
  maxLongPolls: numberDefault(SERVER_OPTIONS.maxLongPolls),
};
