/** GET /metrics: the queue's Prometheus metrics in the text format (docs/metrics.md). */
import type { FastifyPluginAsync } from 'fastify';
import type { RouteContext } from '../context.js';
import { HttpError } from '../errors.js';
import { apiRoute } from '../route-schema.js';

const schema = apiRoute({
  operationId: 'getMetrics',
  tags: ['system'],
  summary: 'Prometheus metrics in the text format (docs/metrics.md)',
  description: 'Needs the token unless the server serves its metrics publicly (--metrics-public); 404 ROUTE_NOT_FOUND when the server keeps none.',
  ok: { 200: { type: 'string' } },
  produces: 'text/plain',
  errors: ['ROUTE_NOT_FOUND'],
});

export const metricsRoutes: FastifyPluginAsync<RouteContext> = async (app, { metrics }) => {
  app.get('/metrics', { config: { access: 'metrics' }, schema }, async (_request, reply) => {
    if (metrics === null) throw new HttpError('ROUTE_NOT_FOUND', 'no route GET /metrics: this server has no metrics');
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
};
