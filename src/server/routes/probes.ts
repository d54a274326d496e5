/**
 * `GET /` (to the dashboard when it is served) and `GET /readyz`, the readiness probe: 200
 * when this process can serve (its queue open, not closing) and its store answers a cheap
 * read within READY_TIMEOUT_MS; 503 in the error envelope otherwise (SHUTTING_DOWN,
 * QUEUE_CLOSED or STORE_UNAVAILABLE). `/healthz` stays the liveness probe: it never asks the
 * store, so a store outage takes instances out of rotation without restarting them.
 */
import type { FastifyPluginAsync } from 'fastify';
import { DelayQError } from '../../core/errors.js';
import { redactUrlsIn } from '../../core/redact.js';
import { PUBLIC_ROUTE } from '../access.js';
import type { RouteContext } from '../context.js';
import { HttpError } from '../errors.js';
import { readySchema } from '../response-schemas.js';
import { apiRoute } from '../route-schema.js';
import type { ReadyResponse } from '../../wire/types.js';

/** The longest the readiness probe waits for the store. */
export const READY_TIMEOUT_MS = 1_000;
const readyRoute = apiRoute({
  operationId: 'getReadiness',
  tags: ['system'],
  summary: 'Readiness: 200 when the queue is open and the store answered a read within 1 s; 503 otherwise',
  ok: { 200: readySchema },
  errors: ['STORE_UNAVAILABLE', 'QUEUE_CLOSED', 'SHUTTING_DOWN'],
});

/** A key no task can have (ids never hold a space): one read by primary key, answered "not found". */
const PROBE_ID = 'delayq readyz probe';

export interface ProbeOptions extends RouteContext {
  /** Is the dashboard served at /ui/? */
  readonly ui: boolean;
}

export const probeRoutes: FastifyPluginAsync<ProbeOptions> = async (app, { queue, draining, ui }) => {
  // A redirect to a page, not part of the API: left out of the OpenAPI document.
  app.get('/', { ...PUBLIC_ROUTE, schema: { hide: true } }, async (request, reply) => {
    if (!ui) throw new HttpError('ROUTE_NOT_FOUND', 'no route GET / (the dashboard is off: --no-ui)');
    return reply.redirect('/ui/', 302);
  });

  app.get<{ Reply: ReadyResponse }>('/readyz', { ...PUBLIC_ROUTE, schema: readyRoute }, async () => {
    if (draining.aborted) throw new HttpError('SHUTTING_DOWN', 'not ready: the server is shutting down');
    if (queue.closed) throw new DelayQError('QUEUE_CLOSED', 'not ready: the queue is closing or closed');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, READY_TIMEOUT_MS, 'timeout')));
    try {
      const answer = await Promise.race([queue.store.get(PROBE_ID).then(() => 'answered' as const), timeout]);
      if (answer === 'timeout') throw new DelayQError('STORE_UNAVAILABLE', `not ready: the store did not answer within ${READY_TIMEOUT_MS} ms`);
    } catch (error) {
      if (error instanceof DelayQError && error.message.startsWith('not ready:')) throw error;
      throw new DelayQError('STORE_UNAVAILABLE', `not ready: the store failed: ${redactUrlsIn((error as Error).message)}`);
    } finally {
      clearTimeout(timer);
    }
    return { status: 'ready' };
  });
};
