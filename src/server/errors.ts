/**
 * Errors on the wire. The library's DelayQError codes are sent unchanged; this module is
 * the one place that gives each an HTTP status, and it holds the registry of the codes
 * only the HTTP layer produces. docs/errors.md lists both; a test keeps them in step.
 */
import { own } from '../core/dict.js';
import { DelayQError, type ErrorCode } from '../core/errors.js';
import type { ErrorBody } from '../wire/types.js';
import type { ServerErrorCode } from '../wire/error-codes.js';

export const SERVER_ERROR_CODES = {
  UNAUTHORIZED: { status: 401, description: 'missing or wrong `Authorization: Bearer <token>` on a route that needs it (/v1, and /metrics unless public)' },
  CROSS_ORIGIN_REFUSED: {
    status: 403,
    description: 'a request that can change state (POST, PUT, PATCH, DELETE) sent by a page of another origin, as its `Origin` or `Sec-Fetch-Site` header says',
  },
  HOST_NOT_ALLOWED: {
    status: 421,
    description: 'a server without a token answers its guarded routes only for loopback Host names (localhost, 127.0.0.1, [::1]) and those given with `--allow-host` (DNS rebinding)',
  },
  ROUTE_NOT_FOUND: { status: 404, description: 'no route for this method and path' },
  BAD_REQUEST: { status: 400, description: 'the request is not valid HTTP, or is refused by the HTTP layer for a reason no other code names' },
  INVALID_PATH: { status: 400, description: 'the path has a bad percent-escape, or a dot segment (`.` / `..`) where a file is served' },
  PATH_TOO_LONG: { status: 414, description: 'a path segment (an id, a topic) is longer than any the server accepts' },
  HEADERS_TOO_LARGE: { status: 431, description: 'the request headers are larger than the server accepts' },
  REQUEST_TIMEOUT: { status: 408, description: 'the request was not received in full within the server\'s request timeout' },
  INVALID_JSON: { status: 400, description: 'the body is not valid JSON (or is empty where a JSON object is required)' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    description: 'a body with a Content-Type other than application/json, or a POST without `Content-Type: application/json` (required even with no body)',
  },
  BODY_TOO_LARGE: { status: 413, description: 'the request body is larger than the server accepts (a 1 MiB payload plus envelope by default)' },
  TOO_MANY_LONG_POLLS: { status: 429, description: 'too many reserve long-polls waiting at once; retry later' },
  TOO_MANY_STREAMS: { status: 429, description: 'too many event streams (GET /v1/events) open at once; retry later' },
  SHUTTING_DOWN: { status: 503, description: 'the server is shutting down and takes no new requests' },
  INTERNAL_ERROR: { status: 500, description: 'an unexpected failure in the server (logged with the request id)' },
} as const satisfies Record<ServerErrorCode, { status: number; description: string }>;

/** HTTP status of each library code. */
export const CORE_ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  INVALID_ARGUMENT: 400,
  INVALID_TOPIC: 400,
  INVALID_ID: 400,
  INVALID_DELAY: 400,
  INVALID_PAYLOAD: 400,
  PAYLOAD_TOO_LARGE: 413,
  PAYLOAD_TOO_DEEP: 400,
  INVALID_OPTION: 400,
  BATCH_TOO_LARGE: 413,
  TASK_NOT_FOUND: 404,
  TASK_NOT_PENDING: 409,
  TASK_NOT_DEAD: 409,
  STALE_RECEIPT: 409,
  QUEUE_CLOSED: 503,
  STORE_UNAVAILABLE: 503,
  STORE_INCOMPATIBLE: 503,
  SCHEMA_OUTDATED: 503,
  STORE_LOCKED: 503,
  INVALID_STORE_URL: 500,
  INVALID_URL: 400,
  INVALID_SECRET: 400,
  PUSH_NOT_FOUND: 404,
  PUSH_NO_SECRET: 400,
  INVALID_SCHEDULE: 400,
  SCHEDULE_NOT_FOUND: 404,
  LIMITS_NOT_FOUND: 404,
  // A handler's signal reasons, in-process only; never an HTTP answer.
  RESERVATION_LOST: 409,
  HANDLER_TIMEOUT: 500,
  WORKER_CLOSED: 503,
};

/** An error the HTTP layer itself raises (auth, routing, body parsing, load shedding). */
export class HttpError extends Error {
  readonly status: number;

  constructor(
    readonly code: ServerErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
    this.status = SERVER_ERROR_CODES[code].status;
  }
}

export interface WireError {
  readonly status: number;
  readonly body: ErrorBody;
}

/** Fastify's own error codes that describe a bad request rather than a server fault. */
const FASTIFY_ERRORS: Readonly<Record<string, ServerErrorCode>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_JSON',
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
};

export function errorBody(code: ErrorBody['error']['code'], message: string, details?: Readonly<Record<string, unknown>>): ErrorBody {
  return { error: details === undefined ? { code, message } : { code, message, details: { ...details } } };
}

/**
 * Turns anything thrown while handling a request into a status and an error body. Returns
 * null for an unexpected error, which the caller logs and answers with INTERNAL_ERROR.
 */
export function toWireError(error: unknown): WireError | null {
  if (error instanceof DelayQError) return { status: CORE_ERROR_STATUS[error.code], body: errorBody(error.code, error.message, error.details) };
  if (error instanceof HttpError) return { status: error.status, body: errorBody(error.code, error.message) };
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') {
    const code = own(FASTIFY_ERRORS, error.code);
    if (code !== undefined) return { status: SERVER_ERROR_CODES[code].status, body: errorBody(code, fastifyMessage(code, error)) };
  }
  return null;
}

function fastifyMessage(code: ServerErrorCode, error: object): string {
  const original = 'message' in error && typeof error.message === 'string' ? error.message : '';
  switch (code) {
    case 'INVALID_JSON':
      return `body: not valid JSON (${original})`;
    case 'BODY_TOO_LARGE':
      return 'body: larger than the server accepts for this route';
    case 'UNSUPPORTED_MEDIA_TYPE':
      return 'body: send JSON with Content-Type: application/json';
    default:
      return original;
  }
}
