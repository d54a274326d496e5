/**
 * The app factory: a fastify instance with every route, hook and error mapping, and no
 * listen, so tests drive it with inject() and src/server/main.ts decides where it listens.
 * It does not own the queue: whoever opened it closes it, after app.close().
 */
import { eventRoutes } from './routes/events.js';
import type { IncomingMessage } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import { MAX_SCHEDULE_ID_LENGTH } from '../core/schedule/model.js';
import type { EngineQueue } from '../engine/engine-queue.js';
import type { QueueMetrics } from '../metrics/prometheus.js';
import { checkAccess, checkHostGiven, checkSameOrigin, hostNameOf, type AccessRules } from './access.js';
import { createTokenCheck } from './auth.js';
import { answerClientError, answerFrameworkError, mapStatusError } from './framework-errors.js';
import type { RouteContext } from './context.js';
import { HttpError, errorBody, toWireError } from './errors.js';
import { parseJsonBody } from './json-body.js';
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from './limits.js';
import { consumerRoutes } from './routes/consumers.js';
import { metricsRoutes } from './routes/metrics.js';
import { operatorRoutes } from './routes/operator.js';
import { probeRoutes } from './routes/probes.js';
import { uiRoutes } from './routes/ui.js';
import { docsRoutes } from './routes/docs.js';
import { collectRoutes } from './openapi.js';
import { responseProblem } from './response-check.js';
import { pushRoutes } from './routes/push.js';
import { scheduleRoutes } from './routes/schedules.js';
import { systemRoutes } from './routes/system.js';
import { SERVER_VERSION } from './routes/system.js';
import { tasksRoutes } from './routes/tasks.js';
import { schemaErrorToDelayQError } from './validation-errors.js';

export interface AppOptions {
  readonly queue: EngineQueue;
  /** When set, every /v1 route needs `Authorization: Bearer <token>`. */
  readonly token?: string | undefined;
  readonly limits?: Partial<ServerLimits>;
  /** A pino logger, or false for none (tests). */
  readonly logger?: FastifyBaseLogger | false;
  /** Log every request (off by default: at 20k requests/s the log is the bottleneck). */
  readonly logRequests?: boolean;
  /** The queue's metrics, served at GET /metrics (404 without). */
  readonly metrics?: QueueMetrics | null;
  /** Serve GET /metrics without the token. */
  readonly metricsPublic?: boolean;
  /**
   * Without a token: Host names the guarded routes answer besides localhost, 127.0.0.1 and
   * [::1] (access.ts, DNS rebinding): the server's name behind a proxy, or its own address.
   */
  readonly allowHosts?: readonly string[];
  /** Serve the dashboard at /ui/ (default true). */
  readonly ui?: boolean;
  /**
   * Tests: fail (500) any answer its route's response schema would change, or any error code
   * the route does not declare (response-check.ts). Costs a second serialization per answer.
   */
  readonly checkResponses?: boolean;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const limits: ServerLimits = { ...DEFAULT_SERVER_LIMITS, ...options.limits };
  const drain = new AbortController();
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    logController: new LogController({ disableRequestLogging: options.logRequests !== true }),
    bodyLimit: limits.maxPayloadBytes + limits.envelopeBytes,
    // fastify's own 503 body does not follow {error: {code, message}}; the drain hook answers instead.
    return503OnClosing: false,
    // Defaults would strip unknown fields and coerce types; the contract is to reject both.
    // verbose: a failure carries its schema, so an integer's bounds reach its message (validation-errors.ts).
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false, verbose: true } },
    // Room for the longest id, topic or schedule id the validators accept (fastify's default is
    // 100): the validators answer for those too long, not the router.
    routerOptions: { maxParamLength: maxParamLength(options.queue) },
    // fastify's own answers to a bad path or a malformed request, in our envelope.
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    // A request without Host reaches the hooks, which answer it in the envelope (access.ts checkHostGiven).
    http: { requireHostHeader: false },
  }) as unknown as FastifyInstance;

  // Only JSON bodies: fastify's text/plain parser would let a string reach the schemas.
  app.removeContentTypeParser('text/plain');
  // Our JSON parser: clear answers to hostile bodies (json-body.ts).
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    let value: unknown;
    try {
      // A POST with no body still says it is JSON (access.ts): empty is no body, where none is needed.
      value = (body as string).length === 0 && !needsBody(request.routeOptions.schema?.body) ? undefined : parseJsonBody(body as string);
    } catch (error) {
      done(error as Error, undefined);
      return;
    }
    done(null, value);
  });

  const access: AccessRules = {
    checkToken: options.token === undefined || options.token === '' ? null : createTokenCheck(options.token),
    metricsPublic: options.metricsPublic === true,
    allowedHosts: new Set((options.allowHosts ?? []).map(hostNameOf)),
  };
  // Callback-style hooks: they run on every request, and an async hook costs a promise each.
  app.addHook('onRequest', (request, reply, done) => {
    try {
      if (drain.signal.aborted && request.routeOptions.url !== '/healthz') {
        reply.header('connection', 'close');
        throw new HttpError('SHUTTING_DOWN', 'the server is shutting down; retry against another instance or later');
      }
      checkHostGiven(request);
      checkSameOrigin(request);
      checkAccess(request, access);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  });

  // Long-polls end first, so closing waits for nothing longer than a store write.
  app.addHook('preClose', async () => drain.abort());
  // Node closes only the connections idle when close() starts; one busy then would stay
  // open on keep-alive after its answer and hold the close until the client drops it.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (drain.signal.aborted) reply.header('connection', 'close');
    done(null, payload);
  });

  app.setNotFoundHandler(async (request) => {
    throw new HttpError('ROUTE_NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0] ?? ''}`);
  });

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const mapped = toWireError(error.validation ? schemaErrorToDelayQError(error.validation, error.validationContext ?? 'body') : error);
    if (mapped !== null) {
      if (mapped.status === 401) reply.header('www-authenticate', 'Bearer');
      return reply.code(mapped.status).send(mapped.body);
    }
    if (clientWentAway(error, request.raw)) {
      // The client hung up mid-request (its body cut short): nothing failed here, and nobody hears the answer.
      request.log.debug({ code: error.code, message: error.message }, 'client disconnected mid-request');
      return reply.code(400).send(errorBody('INVALID_JSON', 'body: the client disconnected before sending all of it'));
    }
    // A plugin's 4xx (a dot segment under /ui): the client's fault, answered in the envelope, not logged as a failure.
    const refused = mapStatusError(error);
    if (refused !== null) {
      request.log.debug({ code: error.code, status: error.statusCode }, 'request refused');
      return reply.code(refused.status).send(refused.body);
    }
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send(errorBody('INTERNAL_ERROR', `internal error (request ${request.id})`));
  });

  if (options.checkResponses === true)
    app.addHook('preSerialization', (request, reply, payload, done) => {
      const problem = responseProblem(request, reply, payload);
      if (problem === null) return done(null, payload);
      process.emitWarning(problem, 'ResponseContractWarning');
      done(new Error(problem));
    });

  // Before any route: the OpenAPI document is built from every route registered after this.
  const routes = collectRoutes(app);
  const context: RouteContext = { queue: options.queue, limits, draining: drain.signal, metrics: options.metrics ?? null };
  await app.register(tasksRoutes, context);
  await app.register(consumerRoutes, context);
  await app.register(pushRoutes, context);
  await app.register(scheduleRoutes, context);
  await app.register(systemRoutes, context);
  await app.register(operatorRoutes, context);
  await app.register(eventRoutes, context);
  await app.register(metricsRoutes, context);
  await app.register(docsRoutes, { version: SERVER_VERSION, routes });
  // The token is asked only to decide how much /readyz says (a public route).
  const tokenGiven = (request: FastifyRequest): boolean => {
    if (access.checkToken === null) return false;
    try {
      access.checkToken(request.headers.authorization);
      return true;
    } catch {
      return false;
    }
  };
  await app.register(probeRoutes, { ...context, ui: options.ui !== false, tokenGiven });
  if (options.ui !== false) await app.register(uiRoutes, { auth: access.checkToken !== null, version: SERVER_VERSION });
  return app;
}

/** True for the error Node raises when the client closes the connection before its request ended. */
function clientWentAway(error: FastifyError, raw: IncomingMessage): boolean {
  const gone = raw.destroyed || raw.socket?.destroyed === true;
  const code = error.code as string | undefined;
  return gone && (code === 'ECONNRESET' || code === 'ECONNABORTED' || code === 'ERR_STREAM_PREMATURE_CLOSE' || error.message === 'aborted');
}

/** Does a route's body schema require a body (an array, or an object with required fields)? */
function needsBody(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  if ('type' in schema && schema.type === 'array') return true;
  return 'required' in schema && Array.isArray(schema.required) && schema.required.length > 0;
}

/** The longest route parameter: twice the longest id or topic the queue accepts, so the validators answer for any near it. */
function maxParamLength(queue: EngineQueue): number {
  return Math.max(512, 2 * Math.max(queue.limits.maxIdLength, queue.limits.maxTopicLength, MAX_SCHEDULE_ID_LENGTH));
}
