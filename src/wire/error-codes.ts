/**
 * Every error code that can reach a client, by name: the client's copy of the registries.
 * The source of each code is the registry of the layer that raises it, ERROR_CODES in
 * src/core/errors.ts and SERVER_ERROR_CODES in src/server/errors.ts; the client may import
 * neither (it imports only src/client and src/wire), so the names are repeated here and
 * test/server/error-codes.test.ts checks them against the registries, at compile time and at
 * run time. docs/errors.md describes each code; the same test checks it too.
 */

/** The library's codes (src/core/errors.ts), sent as they are. */
export const CORE_ERROR_CODES = [
  'INVALID_ARGUMENT',
  'INVALID_TOPIC',
  'INVALID_ID',
  'INVALID_DELAY',
  'INVALID_PAYLOAD',
  'PAYLOAD_TOO_LARGE',
  'PAYLOAD_TOO_DEEP',
  'INVALID_OPTION',
  'BATCH_TOO_LARGE',
  'TASK_NOT_FOUND',
  'TASK_NOT_PENDING',
  'TASK_NOT_DEAD',
  'STALE_RECEIPT',
  'QUEUE_CLOSED',
  'STORE_UNAVAILABLE',
  'STORE_INCOMPATIBLE',
  'SCHEMA_OUTDATED',
  'STORE_LOCKED',
  'INVALID_STORE_URL',
  'INVALID_URL',
  'INVALID_SECRET',
  'PUSH_NOT_FOUND',
  'PUSH_NO_SECRET',
  'INVALID_SCHEDULE',
  'SCHEDULE_NOT_FOUND',
  'LIMITS_NOT_FOUND',
  'RESERVATION_LOST',
  'HANDLER_TIMEOUT',
  'WORKER_CLOSED',
] as const;

/** Codes only the HTTP layer produces (src/server/errors.ts). */
export const SERVER_ERROR_CODES = [
  'UNAUTHORIZED',
  'CROSS_ORIGIN_REFUSED',
  'HOST_NOT_ALLOWED',
  'ROUTE_NOT_FOUND',
  'BAD_REQUEST',
  'INVALID_PATH',
  'PATH_TOO_LONG',
  'HEADERS_TOO_LARGE',
  'REQUEST_TIMEOUT',
  'INVALID_JSON',
  'UNSUPPORTED_MEDIA_TYPE',
  'BODY_TOO_LARGE',
  'TOO_MANY_LONG_POLLS',
  'TOO_MANY_STREAMS',
  'SHUTTING_DOWN',
  'INTERNAL_ERROR',
] as const;

/** Codes the client makes up itself when there is no usable answer from a server. */
export const CLIENT_ERROR_CODES = {
  SERVER_UNREACHABLE: 'the request could not be sent or the connection failed (status 0)',
  TIMEOUT: 'no answer within the client timeout (status 0)',
  BAD_RESPONSE: 'the server answered with something that is not a delayq response',
} as const;

export type CoreErrorCode = (typeof CORE_ERROR_CODES)[number];
export type ServerErrorCode = (typeof SERVER_ERROR_CODES)[number];
export type ClientErrorCode = keyof typeof CLIENT_ERROR_CODES;
export type WireErrorCode = CoreErrorCode | ServerErrorCode;
export type AnyErrorCode = WireErrorCode | ClientErrorCode;

const WIRE_CODES: ReadonlySet<string> = new Set<string>([...CORE_ERROR_CODES, ...SERVER_ERROR_CODES]);

export function isWireErrorCode(code: unknown): code is WireErrorCode {
  return typeof code === 'string' && WIRE_CODES.has(code);
}
