/** Operational routes: /v1/stats (a page of topics: stats-page.ts) and /healthz (open, for load balancers). /openapi.json: routes/docs.ts. */
import type { FastifyPluginAsync } from 'fastify';
import type { HealthResponse, StatsResponse } from '../../wire/types.js';
import type { RouteContext } from '../context.js';
import { PUBLIC_ROUTE } from '../access.js';
import { healthSchema, statsSchema } from '../response-schemas.js';
import { STORE_ERRORS, TOPIC, apiRoute, intQuery } from '../route-schema.js';
import { DEFAULT_STATS_TOPICS, MAX_STATS_TOPICS, statsPage, validateStatsPage } from '../stats-page.js';

/** `topicLimit` and `after`: a page of topics by name (GET /v1/stats, GET /v1/activity). */
export const TOPIC_PAGE_QUERY = {
  topicLimit: intQuery(1, MAX_STATS_TOPICS, DEFAULT_STATS_TOPICS, 6, 'most topics in the page'),
  after: { ...TOPIC, description: 'the `topicsNext` of the previous page' },
} as const;

const tags = ['system'];
const statsRoute = apiRoute({
  operationId: 'getStats',
  tags,
  summary: 'Counts, timers, backlog, oldest ready, waiting long-polls, lateness and push counters',
  description:
    'The per-topic parts (topics, ready, oldestReady, push.topics) hold one page of topics by name: after `after`, at most `topicLimit`; pass `topicsNext` as `after` for the next page (null on the last). The totals are the whole queue\'s on every page.',
  query: TOPIC_PAGE_QUERY,
  ok: { 200: statsSchema },
  errors: ['INVALID_OPTION', 'INVALID_TOPIC', ...STORE_ERRORS],
});
const healthRoute = apiRoute({ operationId: 'getHealth', tags, summary: 'Liveness: 200 ok, or 503 closing while the server shuts down', ok: { 200: healthSchema, 503: healthSchema } });

export const SERVER_VERSION = '0.1.0';

export const systemRoutes: FastifyPluginAsync<RouteContext> = async (app, { queue, draining }) => {
  app.get<{ Querystring: { topicLimit?: string; after?: string }; Reply: StatsResponse }>('/v1/stats', { schema: statsRoute }, async (request) => {
    const query = validateStatsPage(request.query);
    return statsPage(await queue.stats(), query);
  });

  app.get<{ Reply: HealthResponse }>('/healthz', { ...PUBLIC_ROUTE, schema: healthRoute }, async (_request, reply) => {
    const closing = draining.aborted || queue.closed;
    return reply.code(closing ? 503 : 200).send({ status: closing ? 'closing' : 'ok' });
  });
};
