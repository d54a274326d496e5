/**
 * GET /openapi.json: the API described from the routes themselves. Every route registers its
 * fastify schema through apiRoute() (route-schema.ts), and collectRoutes() records each one as
 * it is added, so the document holds the very schemas the server validates requests with and
 * serializes answers with: the parameters, the body, each answer, and the error codes.
 */
import { dict, type Dict } from '../core/dict.js';
import http from 'node:http';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import { NAMED_SCHEMAS } from './response-schemas.js';
import { errorStatus, routeErrors, type ParameterMap } from './route-schema.js';

export interface RouteRecord {
  readonly method: string;
  readonly url: string;
  /** The route's options: read when the document is built, after every onRoute hook ran. */
  readonly options: RouteOptions;
}

export interface RouteRegistry {
  /** Every route but HEAD ones, as added. */
  readonly all: RouteRecord[];
}

/** Routes in the document: not hidden, with an operationId (read after every onRoute hook ran). */
export function documented(registry: RouteRegistry): RouteRecord[] {
  return registry.all.filter(({ options }) => options.schema?.hide !== true && options.schema?.operationId !== undefined);
}

/** Routes neither hidden nor described (a test fails on any). */
export function undocumented(registry: RouteRegistry): RouteRecord[] {
  return registry.all.filter(({ options }) => options.schema?.hide !== true && options.schema?.operationId === undefined);
}

const registries = new WeakMap<FastifyInstance, RouteRegistry>();

/** The routes collectRoutes() recorded on this app. */
export function routeRegistry(app: FastifyInstance): RouteRegistry | undefined {
  return registries.get(app);
}

/** Records every route added from now on (call before registering them). */
export function collectRoutes(app: FastifyInstance): RouteRegistry {
  const registry: RouteRegistry = { all: [] };
  registries.set(app, registry);
  app.addHook('onRoute', (options) => {
    const methods = Array.isArray(options.method) ? options.method : [options.method];
    for (const method of methods) {
      if (method === 'HEAD') continue;
      registry.all.push({ method, url: options.url, options });
    }
  });
  return registry;
}

const json = (schema: object): object => ({ content: { 'application/json': { schema } } });
const TAGS = [
  { name: 'tasks', description: 'Schedule, read, list, move and cancel tasks' },
  { name: 'consumers', description: 'Reserve due tasks, extend a reservation that needs more time, and settle each delivery (ack or nack)' },
  { name: 'push', description: 'Push subscriptions: the server POSTs due tasks to a URL (docs/push.md)' },
  { name: 'schedules', description: 'Recurring schedules: cron or a fixed interval (docs/cron.md)' },
  { name: 'operator', description: "The operator's routes: dead tasks, the timeline, the dashboard's feed" },
  { name: 'events', description: 'Lifecycle events as Server-Sent Events (docs/service.md, "Lifecycle events")' },
  { name: 'system', description: 'Stats, health, metrics and this document' },
];

export function buildOpenApi(version: string, registry: RouteRegistry): object {
  const paths = dict<Dict<object>>();
  for (const route of documented(registry)) {
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    (paths[path] ??= dict())[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'delayq',
      version,
      description:
        'Delayed tasks over HTTP. Times are epoch ms; `runAt` also accepts ISO 8601. Every error answers `{error: {code, message, details?}}` (docs/errors.md). ' +
        'A POST must say `Content-Type: application/json`, even with no body; a request that changes state from a page of another origin is refused.',
      license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
    },
    servers: [{ url: '/', description: 'the server that serves this document' }],
    tags: TAGS,
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: "the server's token (--token or DELAYQ_TOKEN), when it has one" } },
      schemas: Object.fromEntries(Object.entries(NAMED_SCHEMAS).map(([name, schema]) => [name, toDoc(schema, schema)] as const)),
    },
  };
}

function operation({ method, options }: RouteRecord): object {
  const schema = options.schema as FastifySchema;
  const access = options.config?.access ?? 'token';
  const parameters = [...parameterList(schema.parameters?.path, 'path'), ...parameterList(schema.parameters?.query, 'query'), ...parameterList(schema.parameters?.header, 'header')];
  const responses = dict<object>();
  const ok = (schema.response ?? { 200: { type: 'string' } }) as Record<string, object>;
  for (const [status, answer] of Object.entries(ok)) {
    if (!/^[0-9]{3}$/.test(status)) continue;
    const content = { content: { [schema.produces ?? 'application/json']: { schema: toDoc(answer) } } };
    responses[status] = { description: http.STATUS_CODES[Number(status)] ?? status, ...content };
  }
  if (schema.produces !== undefined) responses['200'] = { description: 'OK', content: { [schema.produces]: { schema: { type: 'string' } } } };
  const byStatus = new Map<number, string[]>();
  for (const code of routeErrors(method, schema, access)) {
    const status = errorStatus(code);
    if (responses[String(status)] !== undefined && !byStatus.has(status)) continue;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b))
    responses[String(status)] = { description: `${http.STATUS_CODES[status] ?? 'Error'}: ${codes.join(', ')}`, ...json({ $ref: '#/components/schemas/Error' }) };
  return {
    operationId: schema.operationId,
    tags: schema.tags,
    summary: schema.summary,
    ...(schema.description !== undefined ? { description: schema.description } : {}),
    ...(access === 'public' ? { security: [] } : access === 'metrics' ? { security: [{ bearer: [] }, {}] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(schema.body !== undefined ? { requestBody: { required: needsBody(schema.body as object), ...json(toDoc(schema.body) as object) } } : {}),
    responses,
  };
}

function parameterList(map: ParameterMap | undefined, place: 'path' | 'query' | 'header'): object[] {
  return Object.entries(map ?? {}).map(([name, { description, digits: _digits, required, ...schema }]) => ({
    name,
    in: place,
    ...(place === 'path' || required === true ? { required: true } : {}),
    ...(description !== undefined ? { description } : {}),
    schema,
  }));
}

function needsBody(schema: object): boolean {
  return ('type' in schema && schema.type === 'array') || ('required' in schema && Array.isArray(schema.required) && schema.required.length > 0);
}

const REFS = new Map<object, string>(Object.entries(NAMED_SCHEMAS).map(([name, schema]) => [schema, `#/components/schemas/${name}`]));

/** A schema as the document shows it: the named ones by reference, no empty `required`. */
function toDoc(schema: unknown, self?: object): unknown {
  if (Array.isArray(schema)) return schema.map((item) => toDoc(item));
  if (typeof schema !== 'object' || schema === null) return schema;
  const ref = schema !== self ? REFS.get(schema) : undefined;
  if (ref !== undefined) return { $ref: ref };
  const out = dict<unknown>();
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'required' && Array.isArray(value) && value.length === 0) continue;
    out[key] = key === 'properties' || key === 'additionalProperties' || key === 'items' || key === 'oneOf' || key === 'anyOf' ? toDocMap(key, value) : value;
  }
  return out;
}

function toDocMap(key: string, value: unknown): unknown {
  if (key === 'properties' && typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, toDoc(sub)]));
  return toDoc(value);
}
