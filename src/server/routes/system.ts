/** Operational routes: /v1/stats (a page of topics: stats-page.ts), /healthz (open, for load balancers) and /openapi.json. */
import type { FastifyPluginAsync } from 'fastify';
import type { HealthResponse, StatsResponse } from '../../wire/types.js';
import type { RouteContext } from '../context.js';
import { PUBLIC_ROUTE } from '../access.js';
import { buildOpenApi } from '../openapi.js';
import { statsQuerySchema } from '../schemas.js';
import { statsPage, validateStatsPage } from '../stats-page.js';

export const SERVER_VERSION = '0.1.0';

export const systemRoutes: FastifyPluginAsync<RouteContext> = async (app, { queue, draining }) => {
  const openApi = buildOpenApi(SERVER_VERSION);

  app.get<{ Querystring: { topicLimit?: string; after?: string }; Reply: StatsResponse }>('/v1/stats', { schema: { querystring: statsQuerySchema } }, async (request) => {
    const query = validateStatsPage(request.query);
    return statsPage(await queue.stats(), query);
  });

  app.get<{ Reply: HealthResponse }>('/healthz', PUBLIC_ROUTE, async (_request, reply) => {
    const closing = draining.aborted || queue.closed;
    return reply.code(closing ? 503 : 200).send({ status: closing ? 'closing' : 'ok' });
  });

  app.get('/openapi.json', PUBLIC_ROUTE, async () => openApi);
};
