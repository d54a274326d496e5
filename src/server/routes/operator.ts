/**
 * The operator's routes (the dashboard uses them; docs/service.md): the timeline (a
 * due-time histogram), retrying a dead task, retrying the dead tasks of a topic, purging a
 * topic's tasks in one state, pausing a topic and setting its flow limits.
 */
import type { FastifyPluginAsync } from 'fastify';
import { DelayQError } from '../../core/errors.js';
import type { TopicPurgeState } from '../../core/ports/index.js';
import { TOPIC_PURGE_STATES, validateIntOption } from '../../core/task/validate.js';
import type { RouteContext } from '../context.js';
import { SERVER_VERSION, TOPIC_PAGE_QUERY } from './system.js';
import { pick, topicPage, validateStatsPage } from '../stats-page.js';
import { dict } from '../../core/dict.js';
import { activitySchema, deletedSchema, topicLimitsResultSchema, topicPauseResultSchema, topicPurgeResultSchema, cancelDeadManyResultSchema, retryDeadManyResultSchema, retryResultSchema, timelineSchema } from '../response-schemas.js';
import { STORE_ERRORS, TASK_ID, TOPIC, apiRoute } from '../route-schema.js';
import { retryDeadBodySchema, retryDeadManyBodySchema, topicLimitsBodySchema } from '../schemas.js';
import type { TopicLimitsDeleteResponse, TopicLimitsRequest, TopicLimitsResponse } from '../../wire/types.js';

const tags = ['operator'];
const time = { type: 'string', maxLength: 40, description: 'epoch ms or an ISO 8601 date-time' } as const;

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
  const activityRoute = apiRoute({
    operationId: 'getActivity',
    tags,
    summary: "The dashboard's feed: version, uptime, counter totals (all and by topic), lateness histogram, last push failure by topic",
    description:
      "The per-topic parts (activity.topics, pushFailures) hold one page of topics by name, as GET /v1/stats: after `after`, at most `topicLimit`; pass `topicsNext` as `after` for the next page (null on the last). The totals and the lateness are the whole queue's on every page.",
    query: TOPIC_PAGE_QUERY,
    ok: { 200: activitySchema },
    errors: ['INVALID_OPTION', 'INVALID_TOPIC'],
  });
  app.get<{ Querystring: { topicLimit?: string; after?: string } }>('/v1/activity', { schema: activityRoute }, async (request) => {
    const query = validateStatsPage(request.query);
    const activity = metrics?.activity() ?? null;
    const failures = metrics?.lastPushFailures() ?? new Map<string, never>();
    const { page, next, count } = topicPage([...Object.keys(activity?.topics ?? {}), ...failures.keys()], query);
    const pushFailures = dict<{ at: number; error: string }>();
    for (const topic of page) {
      const failure = failures.get(topic);
      if (failure !== undefined) pushFailures[topic] = failure;
    }
    return {
      at: Date.now(),
      startedAt,
      version: SERVER_VERSION,
      store: queue.store.description,
      activity: activity === null ? null : { ...activity, topics: pick(activity.topics, page) },
      pushFailures,
      topicsNext: next,
      topicCount: count,
    };
  });

  const timelineRoute = apiRoute({
    operationId: 'getTimeline',
    tags,
    summary: 'Pending tasks falling due per bucket between from and to, optionally of one topic',
    query: {
      from: { ...time, description: 'epoch ms or an ISO 8601 date-time; default now (rounded down to its minute)' },
      to: { ...time, description: 'epoch ms or an ISO 8601 date-time; default 60 buckets after from' },
      bucketMs: { type: 'integer', minimum: 60_000, digits: 16, description: 'a whole number of minutes, in ms (default 60000)' },
      topic: { ...TOPIC, description: 'only this topic' },
    },
    ok: { 200: timelineSchema },
    errors: ['INVALID_DELAY', 'INVALID_TOPIC', ...STORE_ERRORS],
  });
  app.get<{ Querystring: TimelineQuery }>('/v1/timeline', { schema: timelineRoute }, async (request) => {
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
    {
      bodyLimit: limits.envelopeBytes,
      schema: apiRoute({
        operationId: 'retryDeadTask',
        tags,
        summary: 'Bring a dead task back to pending (now, after delayMs or at runAt)',
        path: { id: TASK_ID },
        body: retryDeadBodySchema,
        ok: { 200: retryResultSchema },
        errors: ['INVALID_ID', 'INVALID_DELAY', 'TASK_NOT_FOUND', 'TASK_NOT_DEAD', ...STORE_ERRORS],
      }),
    },
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
    {
      bodyLimit: limits.envelopeBytes,
      schema: apiRoute({
        operationId: 'retryDeadTasks',
        tags,
        summary: 'Bring up to max (default maxBatch) dead tasks of the topic back to pending, due now',
        path: { topic: TOPIC },
        body: retryDeadManyBodySchema,
        ok: { 200: retryDeadManyResultSchema },
        errors: ['INVALID_TOPIC', 'INVALID_OPTION', ...STORE_ERRORS],
      }),
    },
    async (request) => {
      const { done, more } = await eachDead(request.params.topic, request.body?.max, (id) => queue.retryDead(id));
      return { retried: done, more };
    },
  );

  // Every task of the topic in one state, deleted in bounded steps (engine/topics/topics.ts).
  app.delete<{ Params: { topic: string }; Querystring: { state?: string } }>(
    '/v1/topics/:topic/tasks',
    {
      schema: apiRoute({
        operationId: 'purgeTopic',
        tags,
        summary: "Delete the topic's tasks in one state (completed also takes the cancelled ones; reserved tasks are never purged)",
        path: { topic: TOPIC },
        query: { state: { type: 'string', enum: TOPIC_PURGE_STATES, maxLength: 20, required: true, description: 'pending, dead, or completed (with the cancelled ones)' } },
        ok: { 200: topicPurgeResultSchema },
        errors: ['INVALID_TOPIC', ...STORE_ERRORS],
      }),
    },
    async (request) => ({ purged: await queue.topics.purge(request.params.topic, { state: request.query.state as TopicPurgeState }) }),
  );

  // Pause and resume a topic (engine/topics/topics.ts, ADR 0040): every process sharing the store holds it within pauseSyncMs.
  for (const paused of [true, false]) {
    const verb = paused ? 'pause' : 'resume';
    app.post<{ Params: { topic: string } }>(
      `/v1/topics/:topic/${verb}`,
      {
        bodyLimit: limits.envelopeBytes,
        schema: apiRoute({
          operationId: paused ? 'pauseTopic' : 'resumeTopic',
          tags,
          summary: paused
            ? 'Pause the topic: nothing of it is delivered (reserved or pushed) until it is resumed; its tasks keep their due times and new ones are taken'
            : 'Resume the topic: what fell due while it was paused is delivered, in runAt order',
          path: { topic: TOPIC },
          ok: { 200: topicPauseResultSchema },
          errors: ['INVALID_TOPIC', ...STORE_ERRORS],
        }),
      },
      async (request) => {
        const { topic } = request.params;
        const changed = paused ? await queue.topics.pause(topic) : await queue.topics.resume(topic);
        return { topic, paused, changed };
      },
    );
  }

  // A topic's flow limits (engine/topics/flow-control.ts, ADR 0043): set, read, cleared; every process
  // sharing the store holds a change within pauseSyncMs. 404s as for a push subscription.
  const limitsPath = '/v1/topics/:topic/limits';
  app.put<{ Params: { topic: string }; Body: TopicLimitsRequest; Reply: TopicLimitsResponse }>(
    limitsPath,
    {
      bodyLimit: limits.envelopeBytes,
      schema: apiRoute({
        operationId: 'setTopicLimits',
        tags,
        summary: "Set the topic's flow limits: rate deliveries per periodMs (default 1000) in bursts of at most burst (default rate), and/or at most concurrency in flight",
        description: 'At least one of rate and concurrency; periodMs and burst need rate. Answers the limits as stored (docs/service.md, "Flow control").',
        path: { topic: TOPIC },
        body: topicLimitsBodySchema,
        ok: { 200: topicLimitsResultSchema },
        errors: ['INVALID_TOPIC', 'INVALID_OPTION', ...STORE_ERRORS],
      }),
    },
    async (request) => {
      const { topic } = request.params;
      return { topic, limits: await queue.topics.setLimits(topic, request.body) };
    },
  );

  app.get<{ Params: { topic: string }; Reply: TopicLimitsResponse }>(
    limitsPath,
    {
      schema: apiRoute({
        operationId: 'getTopicLimits',
        tags,
        summary: "The topic's flow limits as the store holds them",
        path: { topic: TOPIC },
        ok: { 200: topicLimitsResultSchema },
        errors: ['INVALID_TOPIC', 'LIMITS_NOT_FOUND', ...STORE_ERRORS],
      }),
    },
    async (request) => {
      const { topic } = request.params;
      const stored = await queue.topics.getLimits(topic);
      if (stored === null) throw limitsNotFound(topic);
      return { topic, limits: stored };
    },
  );

  app.delete<{ Params: { topic: string }; Reply: TopicLimitsDeleteResponse }>(
    limitsPath,
    {
      schema: apiRoute({
        operationId: 'clearTopicLimits',
        tags,
        summary: "Remove the topic's flow limits: it is delivered unlimited again",
        path: { topic: TOPIC },
        ok: { 200: deletedSchema },
        errors: ['INVALID_TOPIC', 'LIMITS_NOT_FOUND', ...STORE_ERRORS],
      }),
    },
    async (request) => {
      const { topic } = request.params;
      if (!(await queue.topics.clearLimits(topic))) throw limitsNotFound(topic);
      return { deleted: true };
    },
  );

  // Up to `max` dead tasks of the topic given up on: dead -> cancelled.
  app.post<{ Params: { topic: string }; Body: { max?: number } | undefined }>(
    '/v1/topics/:topic/dead/cancel',
    {
      bodyLimit: limits.envelopeBytes,
      schema: apiRoute({
        operationId: 'cancelDeadTasks',
        tags,
        summary: 'Give up on up to max (default maxBatch) dead tasks of the topic: dead -> cancelled',
        path: { topic: TOPIC },
        body: retryDeadManyBodySchema,
        ok: { 200: cancelDeadManyResultSchema },
        errors: ['INVALID_TOPIC', 'INVALID_OPTION', ...STORE_ERRORS],
      }),
    },
    async (request) => {
      const { done, more } = await eachDead(request.params.topic, request.body?.max, (id) => queue.cancelDead(id));
      return { cancelled: done, more };
    },
  );
};

function limitsNotFound(topic: string): DelayQError {
  return new DelayQError('LIMITS_NOT_FOUND', `topic ${topic} has no flow limits`, { topic });
}

/** A time in a query: digits are epoch ms; anything else is read as an ISO 8601 date-time by the core. */
function queryTime(text: string): number | string {
  return /^[0-9]{1,16}$/.test(text) ? Number(text) : text;
}
