/**
 * One definition per route for both the server and its OpenAPI document: apiRoute() turns a
 * route's description (operationId, tags, parameters, body, answers, error codes) into the
 * fastify schema the route validates and serializes with; openapi.ts reads the same schema
 * back from every registered route. Nothing is described twice, so the two cannot drift.
 *
 * Query parameters are described as clients see them (integers with bounds, enums); the
 * server receives text and type coercion is off, so the validation schema derived here only
 * checks the text (digits for an integer), and the route's own checks give the range errors.
 */
import type { FastifySchema } from 'fastify';
import { CORE_ERROR_STATUS, SERVER_ERROR_CODES } from './errors.js';
import { errorSchema } from './response-schemas.js';
import type { WireErrorCode } from '../wire/error-codes.js';
import type { RouteAccess } from './access.js';

declare module 'fastify' {
  interface FastifySchema {
    /** OpenAPI: the operation's name (a generated client's method name). */
    operationId?: string;
    tags?: readonly string[];
    summary?: string;
    description?: string;
    /** OpenAPI: the codes this operation answers besides those any route can (routeErrors adds them). */
    errors?: readonly WireErrorCode[];
    /** OpenAPI: the path and query parameters as clients see them. */
    parameters?: { readonly path?: ParameterMap; readonly query?: ParameterMap; readonly header?: ParameterMap };
    /** OpenAPI: the media type of a non-JSON answer (GET /metrics). */
    produces?: string;
    /** Left out of the OpenAPI document (the dashboard, the API reference's files). */
    hide?: boolean;
  }
}

/** A parameter as OpenAPI describes it (a JSON schema of a string, integer or enum). */
export interface ParameterSchema {
  readonly type: 'string' | 'integer';
  readonly description?: string;
  readonly pattern?: string;
  readonly maxLength?: number;
  readonly enum?: readonly string[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: number;
  /** integer only: the most digits the server reads before its own range check (a longer one is INVALID_OPTION too). */
  readonly digits?: number;
  /** A query parameter the route cannot do without (path parameters always are). */
  readonly required?: boolean;
}
export type ParameterMap = Readonly<Record<string, ParameterSchema>>;

export function intQuery(minimum: number, maximum: number, defaultValue: number | undefined, digits: number, description?: string): ParameterSchema {
  return { type: 'integer', minimum, maximum, ...(defaultValue !== undefined ? { default: defaultValue } : {}), digits, ...(description !== undefined ? { description } : {}) };
}

const NAME = '^[A-Za-z0-9._:-]{1,200}$';
export const TASK_ID: ParameterSchema = { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,256}$', description: 'a task id (A-Z a-z 0-9 . _ : -; at most 256 by default)' };
export const SCHEDULE_ID: ParameterSchema = { type: 'string', pattern: NAME, description: 'a schedule id (A-Z a-z 0-9 . _ : -, at most 200)' };
export const TOPIC: ParameterSchema = { type: 'string', pattern: NAME, description: 'a topic (A-Z a-z 0-9 . _ : -, at most 200)' };

/** What the server validates a parameter with: text, digits for an integer. */
function validation(parameter: ParameterSchema): object {
  if (parameter.type === 'integer') return { type: 'string', pattern: `^[0-9]{1,${parameter.digits ?? 16}}$` };
  return { type: 'string', ...(parameter.maxLength !== undefined ? { maxLength: parameter.maxLength } : {}) };
}

function validationObject(map: ParameterMap, path: boolean): object {
  const properties = Object.fromEntries(Object.entries(map).map(([name, parameter]) => [name, path ? { type: 'string' } : validation(parameter)]));
  const required = path ? Object.keys(map) : Object.entries(map).flatMap(([name, parameter]) => (parameter.required === true ? [name] : []));
  return path ? { type: 'object', required, properties } : { type: 'object', additionalProperties: false, ...(required.length > 0 ? { required } : {}), properties };
}

export interface ApiRoute {
  readonly operationId: string;
  readonly tags: readonly string[];
  readonly summary: string;
  readonly description?: string;
  readonly path?: ParameterMap;
  readonly query?: ParameterMap;
  /** Request headers the route reads: documented, not validated by the schema (the handler reads them leniently). */
  readonly header?: ParameterMap;
  readonly body?: object;
  /** The 2xx answers (and any other non-error one, such as /healthz's 503), by status. */
  readonly ok: Readonly<Record<number, object>>;
  /** Codes this route answers besides those any route can (see routeErrors). */
  readonly errors?: readonly WireErrorCode[];
  readonly produces?: string;
}

/** The fastify schema of a route: validation, serialization (errors too), and the document's facts. */
export function apiRoute(route: ApiRoute): FastifySchema {
  return {
    operationId: route.operationId,
    tags: route.tags,
    summary: route.summary,
    ...(route.description !== undefined ? { description: route.description } : {}),
    ...(route.path !== undefined ? { params: validationObject(route.path, true) } : {}),
    ...(route.query !== undefined ? { querystring: validationObject(route.query, false) } : {}),
    ...(route.body !== undefined ? { body: route.body } : {}),
    // A non-JSON answer is sent as text, as it is; its errors are JSON like any route's.
    response: { ...(route.produces === undefined ? route.ok : {}), '4xx': errorSchema, '5xx': errorSchema },
    errors: route.errors ?? [],
    parameters: {
      ...(route.path !== undefined ? { path: route.path } : {}),
      ...(route.query !== undefined ? { query: route.query } : {}),
      ...(route.header !== undefined ? { header: route.header } : {}),
    },
    ...(route.produces !== undefined ? { produces: route.produces } : {}),
  };
}

/** The codes every task-store route can answer when the store fails or the queue is closed. */
export const STORE_ERRORS: readonly WireErrorCode[] = ['STORE_UNAVAILABLE', 'QUEUE_CLOSED'];

/**
 * Every code a route can answer: its own, and those any route with its method, parameters,
 * body and access can (the token, cross-origin and media-type checks, the body parser, the
 * schema checks, the router's path limits, shutdown, an internal failure).
 */
export function routeErrors(method: string, schema: FastifySchema, access: RouteAccess): WireErrorCode[] {
  const codes = new Set<WireErrorCode>(schema.errors ?? []);
  if (access !== 'public') codes.add('UNAUTHORIZED');
  if (access !== 'public') codes.add('HOST_NOT_ALLOWED');
  if (method !== 'GET' && method !== 'HEAD') codes.add('CROSS_ORIGIN_REFUSED');
  if (method === 'POST') codes.add('UNSUPPORTED_MEDIA_TYPE');
  if (schema.body !== undefined) for (const code of ['INVALID_JSON', 'BODY_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'INVALID_ARGUMENT'] as const) codes.add(code);
  if (schema.querystring !== undefined) codes.add('INVALID_ARGUMENT');
  if (schema.params !== undefined) for (const code of ['PATH_TOO_LONG', 'INVALID_PATH'] as const) codes.add(code);
  codes.add('BAD_REQUEST');
  codes.add('SHUTTING_DOWN');
  codes.add('INTERNAL_ERROR');
  return [...codes];
}

/** The HTTP status of a code. */
export function errorStatus(code: WireErrorCode): number {
  return code in SERVER_ERROR_CODES ? SERVER_ERROR_CODES[code as keyof typeof SERVER_ERROR_CODES].status : CORE_ERROR_STATUS[code as keyof typeof CORE_ERROR_STATUS];
}
