/**
 * `GET /` (to the dashboard when it is served) and `GET /readyz`, the readiness probe: 200
 * `{status: 'ready'}` when this process can serve (its queue open, not closing) and its store
 * answers a cheap read within READY_TIMEOUT_MS; 503 `{status: 'not ready'}` otherwise. The
 * route is public (probes carry no token), so its answer says no more than that: why
 * (SHUTTING_DOWN, QUEUE_CLOSED or STORE_UNAVAILABLE, whose message may name the store's host,
 * database, schema or role) is logged at warn, redacted, at most once a minute while it stays
 * the same, and is in the body (`error: {code, message}`) only for a request that carries the
 * server's token. `/healthz` stays the liveness probe: it never asks the store, so a store
 * outage takes instances out of rotation without restarting them.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { DelayQError } from '../../core/errors.js';
import { redactUrlsIn } from '../../core/redact.js';
import { PUBLIC_ROUTE } from '../access.js';
import type { RouteContext } from '../context.js';
import { HttpError } from '../errors.js';
import { notReadySchema, readySchema } from '../response-schemas.js';
import { apiRoute } from '../route-schema.js';
import type { NotReadyResponse, ReadyResponse } from '../../wire/types.js';

/** The longest the readiness probe waits for the store. */
export const READY_TIMEOUT_MS = 1_000;
const readyRoute = apiRoute({
  operationId: 'getReadiness',
  tags: ['system'],
  summary: 'Readiness: 200 when the queue is open and the store answered a read within 1 s; 503 otherwise, with why only for a request with the token',
  ok: { 200: readySchema, 503: notReadySchema },
});
/** A reason that stays the same is logged again after this long. */
const READY_LOG_EVERY_MS = 60_000;

/** A key no task can have (ids never hold a space): one read by primary key, answered "not found". */
const PROBE_ID = 'delayq readyz probe';

export interface ProbeOptions extends RouteContext {
  /** Is the dashboard served at /ui/? */
  readonly ui: boolean;
  /** Whether the request carries the server's token (false when it has none). */
  readonly tokenGiven: (request: FastifyRequest) => boolean;
}

export const probeRoutes: FastifyPluginAsync<ProbeOptions> = async (app, { queue, draining, ui, tokenGiven }) => {
  let logged: { message: string; at: number } | null = null;
  const notReady = (request: FastifyRequest, error: DelayQError | HttpError): NotReadyResponse => {
    const now = Date.now();
    if (logged === null || logged.message !== error.message || now - logged.at >= READY_LOG_EVERY_MS) {
      logged = { message: error.message, at: now };
      request.log.warn({ code: error.code, reason: error.message }, 'readyz: not ready');
    }
    return tokenGiven(request) ? { status: 'not ready', error: { code: error.code, message: error.message } } : { status: 'not ready' };
  };
  // A redirect to a page, not part of the API: left out of the OpenAPI document.
  app.get('/', { ...PUBLIC_ROUTE, schema: { hide: true } }, async (request, reply) => {
    if (!ui) throw new HttpError('ROUTE_NOT_FOUND', 'no route GET / (the dashboard is off: --no-ui)');
    return reply.redirect('/ui/', 302);
  });

  app.get<{ Reply: ReadyResponse | NotReadyResponse }>('/readyz', { ...PUBLIC_ROUTE, schema: readyRoute }, async (request, reply) => {
    const problem = await readiness(queue, draining);
    if (problem === null) return { status: 'ready' };
    return reply.code(503).send(notReady(request, problem));
  });
};

/** Why this process cannot serve now (the store's reason redacted: no password, query or userinfo), or null when it can. */
async function readiness(queue: ProbeOptions['queue'], draining: AbortSignal): Promise<DelayQError | HttpError | null> {
  if (draining.aborted) return new HttpError('SHUTTING_DOWN', 'not ready: the server is shutting down');
  if (queue.closed) return new DelayQError('QUEUE_CLOSED', 'not ready: the queue is closing or closed');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, READY_TIMEOUT_MS, 'timeout')));
  try {
    const answer = await Promise.race([queue.store.tasks.get(PROBE_ID).then(() => 'answered' as const), timeout]);
    return answer === 'timeout' ? new DelayQError('STORE_UNAVAILABLE', `not ready: the store did not answer within ${READY_TIMEOUT_MS} ms`) : null;
  } catch (error) {
    return new DelayQError('STORE_UNAVAILABLE', `not ready: the store failed: ${redactUrlsIn((error as Error).message)}`);
  } finally {
    clearTimeout(timer);
  }
}
