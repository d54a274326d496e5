/** Push subscription routes: PUT, GET and DELETE on /v1/topics/:topic/push, and GET /v1/push (a page by topic). */
import type { FastifyPluginAsync } from 'fastify';
import { DelayQError } from '../../core/errors.js';
import type { PushSubscription } from '../../core/push.js';
import type { PushDeleteResponse, PushListResponse, PushSubscriptionRequest, PushSubscriptionResponse, PushSubscriptionView } from '../../wire/types.js';
import type { RouteContext } from '../context.js';
import { deletedSchema, pushListSchema, pushSubscriptionResultSchema } from '../response-schemas.js';
import { DEFAULT_PUSH_PAGE, MAX_PUSH_PAGE } from '../../engine/push/push-rules.js';
import { STORE_ERRORS, TOPIC, apiRoute, intQuery } from '../route-schema.js';
import { pushBodySchema } from '../schemas.js';

const tags = ['push'];
const path = { topic: TOPIC };

export const pushRoutes: FastifyPluginAsync<RouteContext> = async (app, { queue, limits }) => {
  // 201 when the topic had no subscription, 200 when this replaced one.
  app.put<{ Params: { topic: string }; Body: PushSubscriptionRequest; Reply: PushSubscriptionResponse }>(
    '/v1/topics/:topic/push',
    {
      bodyLimit: limits.envelopeBytes,
      schema: apiRoute({
        operationId: 'setPushSubscription',
        tags,
        summary: "Create (201) or replace (200) the topic's push subscription",
        description: 'The full `secret` is answered only when the request gave one or one was generated (docs/push.md).',
        path,
        body: pushBodySchema,
        ok: { 201: pushSubscriptionResultSchema, 200: pushSubscriptionResultSchema },
        errors: ['INVALID_TOPIC', 'INVALID_URL', 'INVALID_SECRET', 'INVALID_OPTION', ...STORE_ERRORS],
      }),
    },
    async (request, reply) => {
      const { subscription, secret, created } = await queue.setPush(request.params.topic, request.body);
      return reply.code(created ? 201 : 200).send({ subscription: view(subscription), ...(secret !== undefined ? { secret } : {}) });
    },
  );

  app.get<{ Params: { topic: string }; Reply: PushSubscriptionResponse }>(
    '/v1/topics/:topic/push',
    {
      schema: apiRoute({
        operationId: 'getPushSubscription',
        tags,
        summary: "The topic's push subscription, secrets masked",
        path,
        ok: { 200: pushSubscriptionResultSchema },
        errors: ['INVALID_TOPIC', 'PUSH_NOT_FOUND', ...STORE_ERRORS],
      }),
    },
    async (request) => {
      const subscription = await queue.getPush(request.params.topic);
      if (subscription === null) throw notFound(request.params.topic);
      return { subscription: view(subscription) };
    },
  );

  app.delete<{ Params: { topic: string }; Reply: PushDeleteResponse }>(
    '/v1/topics/:topic/push',
    {
      schema: apiRoute({
        operationId: 'deletePushSubscription',
        tags,
        summary: "Delete the topic's push subscription",
        path,
        ok: { 200: deletedSchema },
        errors: ['INVALID_TOPIC', 'PUSH_NOT_FOUND', ...STORE_ERRORS],
      }),
    },
    async (request) => {
      if (!(await queue.deletePush(request.params.topic))) throw notFound(request.params.topic);
      return { deleted: true };
    },
  );

  // Pages by topic, as GET /v1/schedules by id: `next` is the `after` of the next page, null on the last.
  app.get<{ Querystring: { limit?: string; after?: string }; Reply: PushListResponse }>(
    '/v1/push',
    {
      schema: apiRoute({
        operationId: 'listPushSubscriptions',
        tags,
        summary: 'A page of the push subscriptions by topic, secrets masked',
        description: 'At most `limit` after `after`; pass `next` as `after` for the next page (null on the last).',
        query: { limit: intQuery(1, MAX_PUSH_PAGE, DEFAULT_PUSH_PAGE, 5, 'most subscriptions in the page'), after: { ...TOPIC, description: 'the `next` of the previous page' } },
        ok: { 200: pushListSchema },
        errors: ['INVALID_OPTION', 'INVALID_TOPIC', ...STORE_ERRORS],
      }),
    },
    async (request) => {
      const { limit, after } = request.query;
      const page = await queue.listPushPage({ ...(limit !== undefined ? { limit: Number(limit) } : {}), ...(after !== undefined ? { after } : {}) });
      return { subscriptions: page.subscriptions.map(view), next: page.next };
    },
  );
};

function notFound(topic: string): DelayQError {
  return new DelayQError('PUSH_NOT_FOUND', `topic ${topic} has no push subscription`, { topic });
}

/** The library's subscription (secrets already masked) as the wire shows it. */
function view(subscription: PushSubscription): PushSubscriptionView {
  return {
    topic: subscription.topic,
    url: subscription.url,
    secrets: subscription.secrets.map(({ secret, expiresAt }) => ({ secret, expiresAt })),
    timeoutMs: subscription.timeoutMs,
    concurrency: subscription.concurrency,
    headers: { ...subscription.headers },
    createdAt: subscription.createdAt,
    updatedAt: subscription.updatedAt,
  };
}
