/** GET /metrics: the queue's Prometheus metrics in the text format (docs/metrics.md). */
import type { FastifyPluginAsync } from 'fastify';
import type { RouteContext } from '../context.js';
import { HttpError } from '../errors.js';

export const metricsRoutes: FastifyPluginAsync<RouteContext> = async (app, { metrics }) => {
  app.get('/metrics', { config: { access: 'metrics' } }, async (_request, reply) => {
    if (metrics === null) throw new HttpError('ROUTE_NOT_FOUND', 'no route GET /metrics: this server has no metrics');
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
};
