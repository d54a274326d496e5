/**
 * The operator's routes (the dashboard uses them; docs/service.md): the timeline (a
 * due-time histogram), retrying a dead task, and retrying the dead tasks of a topic.
 */
import type { FastifyPluginAsync } from 'fastify';
import { DelayQError } from '../../core/errors.js';
import { validateIntOption } from '../../core/task/validate.js';
import type { RouteContext } from '../context.js';
import { SERVER_VERSION } from './system.js';
import { idParamsSchema, retryDeadBodySchema, retryDeadManyBodySchema, timelineQuerySchema, topicParamsSchema } from '../schemas.js';

interface TimelineQuery {
  from?: string;
  to?: string;
  bucketMs?: string;
  topic?: string;
}

export const operatorRoutes: FastifyPluginAsync<RouteContext> = async (app, { queue, limits, metrics }) => {
  const startedAt = Date.now();

  // The dashboard's feed: counter totals (for rates) and the lateness histogram, by the
  // metrics the queue keeps; O(topics). null parts when the queue has no metrics.
  app.get('/v1/activity', async () => {
    const activity = metrics?.activity() ?? null;
    const pushFailures = Object.fromEntries(metrics?.lastPushFailures() ?? []);
    return { at: Date.now(), startedAt, version: SERVER_VERSION, store: queue.store.description, activity, pushFailures };
  });

  app.get<{ Querystring: TimelineQuery }>('/v1/timeline', { schema: { querystring: timelineQuerySchema } }, async (request) => {
    const { from, to, bucketMs, topic } = request.query;
    return queue.dueHistogram({
      ...(from !== undefined ? { from: queryTime(from) } : {}),
      ...(to !== undefined ? { to: queryTime(to) } : {}),
      ...(bucketMs !== undefined ? { bucketMs: Number(bucketMs) } : {}),
      ...(topic !== undefined ? { topic } : {}),
    });
  });

  // A dead task back to pending (attempts reset), due now, after delayMs or at runAt.
  app.post<{ Params: { id: string }; Body: { delayMs?: number; runAt?: number | string } | undefined }>(
    '/v1/tasks/:id/retry',
    { bodyLimit: limits.envelopeBytes, schema: { params: idParamsSchema, body: retryDeadBodySchema } },
    async (request) => {
      const { id } = request.params;
      if (await queue.retryDead(id, request.body ?? {})) return { retried: true };
      const task = await queue.get(id);
      if (task === null) throw new DelayQError('TASK_NOT_FOUND', `task ${id} not found`, { id });
      throw new DelayQError('TASK_NOT_DEAD', `task ${id} is ${task.state}, not dead`, { id, state: task.state });
    },
  );

  /** Applies `act` to up to `max` (default and at most maxBatch) dead tasks of the topic, in id order. */
  async function eachDead(topic: string, maxOption: unknown, act: (id: string) => Promise<boolean>): Promise<{ done: number; more: boolean }> {
    const max = maxOption === undefined ? limits.maxBatch : validateIntOption(maxOption, 'max', 1, limits.maxBatch);
    let done = 0;
    let afterId: string | undefined;
    for (;;) {
      const page = await queue.list({ topic, state: 'dead', limit: Math.min(1_000, max - done), ...(afterId !== undefined ? { afterId } : {}) });
      for (const task of page) if (await act(task.id)) done++;
      afterId = page.at(-1)?.id;
      if (page.length === 0 || done >= max) break;
    }
    const more = (await queue.list({ topic, state: 'dead', limit: 1 })).length > 0;
    return { done, more };
  }

  // Up to `max` dead tasks of the topic back to pending, due now.
  app.post<{ Params: { topic: string }; Body: { max?: number } | undefined }>(
    '/v1/topics/:topic/dead/retry',
    { bodyLimit: limits.envelopeBytes, schema: { params: topicParamsSchema, body: retryDeadManyBodySchema } },
    async (request) => {
      const { done, more } = await eachDead(request.params.topic, request.body?.max, (id) => queue.retryDead(id));
      return { retried: done, more };
    },
  );

  // Up to `max` dead tasks of the topic given up on: dead -> cancelled.
  app.post<{ Params: { topic: string }; Body: { max?: number } | undefined }>(
    '/v1/topics/:topic/dead/cancel',
    { bodyLimit: limits.envelopeBytes, schema: { params: topicParamsSchema, body: retryDeadManyBodySchema } },
    async (request) => {
      const { done, more } = await eachDead(request.params.topic, request.body?.max, (id) => queue.cancelDead(id));
      return { cancelled: done, more };
    },
  );
};

/** A time in a query: digits are epoch ms; anything else is read as an ISO 8601 date-time by the core. */
function queryTime(text: string): number | string {
  return /^[0-9]{1,16}$/.test(text) ? Number(text) : text;
}
