/** GET /openapi.json: the API described from the same schemas the routes validate with. */
import { ERROR_CODES } from '../core/errors.js';
import { SERVER_ERROR_CODES } from './errors.js';
import {
  ackBodySchema,
  ackManyBodySchema,
  batchBodySchema,
  cancelManyBodySchema,
  nackBodySchema,
  pushBodySchema,
  rescheduleBodySchema,
  reserveBodySchema,
  retryDeadBodySchema,
  retryDeadManyBodySchema,
  scheduleBodySchema,
  scheduleDefinitionSchema,
  scheduleDefinitionsSchema,
} from './schemas.js';

const json = (schema: object): object => ({ content: { 'application/json': { schema } } });
const ok = (description: string): object => ({ description, ...json({ type: 'object' }) });
const error = { $ref: '#/components/responses/Error' };
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,256}$' } };
const scheduleIdParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,200}$' } };
const topicParam = { name: 'topic', in: 'path', required: true, schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,200}$' } };

export function buildOpenApi(version: string): object {
  return {
    openapi: '3.0.3',
    info: { title: 'delayq', version, description: 'Delayed tasks over HTTP. Times are epoch ms; runAt also accepts ISO 8601.' },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { type: 'string', enum: [...Object.keys(ERROR_CODES), ...Object.keys(SERVER_ERROR_CODES)] }, message: { type: 'string' } },
            },
          },
        },
      },
      responses: { Error: { description: 'An error: see docs/errors.md for each code', ...json({ $ref: '#/components/schemas/Error' }) } },
    },
    security: [{ bearer: [] }],
    paths: {
      '/v1/tasks': {
        post: { summary: 'Schedule a task (with `url`: pushed to that URL when due, whatever its topic)', requestBody: json(scheduleBodySchema), responses: { 201: ok('created'), 200: ok('the id existed; nothing changed'), default: error } },
        get: {
          summary: 'List tasks in id order',
          parameters: ['topic', 'state', 'limit', 'after'].map((name) => ({ name, in: 'query', schema: { type: 'string' } })),
          responses: { 200: ok('{tasks, next}'), default: error },
        },
      },
      '/v1/tasks/batch': { post: { summary: 'Schedule many tasks; one result per task', requestBody: json(batchBodySchema), responses: { 200: ok('{results}'), default: error } } },
      '/v1/tasks/ack': {
        post: { summary: 'Ack many deliveries; one answer per ack', requestBody: json(ackManyBodySchema), responses: { 200: ok('{results: [{id, acked: true} | {id, error}]}'), default: error } },
      },
      '/v1/tasks/cancel': {
        post: { summary: 'Cancel many tasks; one answer per id', requestBody: json(cancelManyBodySchema), responses: { 200: ok('{results: [{id, cancelled}]}'), default: error } },
      },
      '/v1/tasks/{id}': {
        parameters: [idParam],
        get: { summary: 'Read a task', responses: { 200: ok('the task: {id, topic, payload, runAt, state, attempts, maxAttempts, ttrMs, backoff, createdAt, updatedAt, reservedUntil, lastError, url}'), default: error } },
        delete: { summary: 'Cancel a pending task', responses: { 200: ok('{cancelled: true}'), default: error } },
        patch: { summary: 'Move a pending task', requestBody: json(rescheduleBodySchema), responses: { 200: ok('{id, runAt}'), default: error } },
      },
      '/v1/topics/{topic}/reserve': {
        parameters: [topicParam],
        post: { summary: 'Reserve due tasks (long-poll with waitMs)', requestBody: json(reserveBodySchema), responses: { 200: ok('{tasks}'), default: error } },
      },
      '/v1/topics/{topic}/push': {
        parameters: [topicParam],
        put: {
          summary: "Create or replace the topic's push subscription (the secret is answered only when given or generated)",
          requestBody: json(pushBodySchema),
          responses: { 201: ok('created: {subscription, secret?}'), 200: ok('replaced: {subscription, secret?}'), default: error },
        },
        get: { summary: "The topic's push subscription, secrets masked (404 PUSH_NOT_FOUND)", responses: { 200: ok('{subscription}'), default: error } },
        delete: { summary: "Delete the topic's push subscription (404 PUSH_NOT_FOUND)", responses: { 200: ok('{deleted: true}'), default: error } },
      },
      '/v1/push': { get: { summary: 'Every push subscription, secrets masked', responses: { 200: ok('{subscriptions}'), default: error } } },
      '/v1/schedules': {
        get: {
          summary: 'A page of the recurring schedules, by id: after `after`, at most `limit` (default 100, at most 1000), fewer when their payloads pass 4 MiB; pass `next` as `after` for the next page (null on the last)',
          parameters: [
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
            { name: 'after', in: 'query', schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,200}$' } },
          ],
          responses: { 200: ok('{schedules, next}'), default: error },
        },
        put: {
          summary: 'Create or change many recurring schedules in one call: an array of definitions, each with its id; all are checked first (400 naming the index, nothing stored)',
          requestBody: json(scheduleDefinitionsSchema),
          responses: { 200: ok('{results: [{schedule, created, changed}]}'), default: error },
        },
      },
      '/v1/schedules/{id}': {
        parameters: [scheduleIdParam],
        put: {
          summary: 'Create or change a recurring schedule (cron with tz, or everyMs); the same definition again changes nothing (400 INVALID_SCHEDULE with the reason)',
          requestBody: json(scheduleDefinitionSchema),
          responses: { 201: ok('created: {schedule, changed: true}'), 200: ok('{schedule, changed}'), default: error },
        },
        get: { summary: 'A recurring schedule (404 SCHEDULE_NOT_FOUND)', responses: { 200: ok('{schedule}'), default: error } },
        delete: { summary: 'Delete a schedule and cancel its occurrences not yet due (404 SCHEDULE_NOT_FOUND)', responses: { 200: ok('{deleted: true}'), default: error } },
      },
      '/v1/schedules/{id}/pause': { parameters: [scheduleIdParam], post: { summary: 'Pause: no occurrence created, those created ahead cancelled', responses: { 200: ok('{schedule}'), default: error } } },
      '/v1/schedules/{id}/resume': { parameters: [scheduleIdParam], post: { summary: 'Resume from the first occurrence at or after now', responses: { 200: ok('{schedule}'), default: error } } },
      '/v1/schedules/{id}/next': {
        parameters: [scheduleIdParam, { name: 'n', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 10 } }],
        get: { summary: 'Preview the next n occurrence times (epoch ms)', responses: { 200: ok('{times}'), default: error } },
      },
      '/v1/tasks/{id}/ack': { parameters: [idParam], post: { summary: 'Ack a delivery', requestBody: json(ackBodySchema), responses: { 200: ok('{acked: true}'), default: error } } },
      '/v1/tasks/{id}/nack': { parameters: [idParam], post: { summary: 'Fail a delivery', requestBody: json(nackBodySchema), responses: { 200: ok('{state, runAt?}'), default: error } } },
      '/v1/tasks/{id}/retry': {
        parameters: [idParam],
        post: { summary: 'Bring a dead task back to pending (now, after delayMs or at runAt); 409 TASK_NOT_DEAD', requestBody: json(retryDeadBodySchema), responses: { 200: ok('{retried: true}'), default: error } },
      },
      '/v1/topics/{topic}/dead/retry': {
        parameters: [topicParam],
        post: { summary: 'Bring up to max (default maxBatch) dead tasks of the topic back to pending, due now', requestBody: json(retryDeadManyBodySchema), responses: { 200: ok('{retried, more}'), default: error } },
      },
      '/v1/topics/{topic}/dead/cancel': {
        parameters: [topicParam],
        post: { summary: 'Give up on up to max (default maxBatch) dead tasks of the topic: dead -> cancelled', requestBody: json(retryDeadManyBodySchema), responses: { 200: ok('{cancelled, more}'), default: error } },
      },
      '/v1/activity': {
        get: { summary: "The dashboard's feed: version, uptime, counter totals (all and by topic), lateness histogram, last push failure by topic", responses: { 200: ok('{at, startedAt, version, store, activity, pushFailures}'), default: error } },
      },
      '/v1/timeline': {
        get: {
          summary: 'Pending tasks falling due per bucket (whole minutes) between from and to (epoch ms or ISO 8601 date-times), optionally of one topic',
          parameters: ['from', 'to', 'bucketMs', 'topic'].map((name) => ({ name, in: 'query', schema: { type: 'string' } })),
          responses: { 200: ok('{from, to, bucketMs, topic, counts, coveredUntil}'), default: error },
        },
      },
      '/metrics': { get: { summary: 'Prometheus metrics (text format; the token unless --metrics-public)', responses: { 200: { description: 'text/plain; version=0.0.4' } } } },
      '/v1/stats': {
        get: {
          summary:
            'Counts, timers, backlog, oldest ready, waiting long-polls, lateness and push counters; the per-topic parts (topics, ready, oldestReady, push.topics) for one page of topics by name: after `after`, at most `topicLimit` (default 1000, at most 10000); pass `topicsNext` as `after` for the next page (null on the last)',
          parameters: [
            { name: 'topicLimit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 10000, default: 1000 } },
            { name: 'after', in: 'query', schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,200}$' } },
          ],
          responses: {
            200: ok('{store, counts, topics, timers, ready, oldestReady, waiting, lateness, push?: {topics: {topic: {sent, ok, failed, deferred, noSlot}}, origins: {origin: {sent, ok, failed, deferred, noSlot, breaker: {state, consecutiveFailures, openUntil}}}}, readyTotal, topicsNext, topicCount}'),
            default: error,
          },
        },
      },
      '/healthz': { get: { summary: 'Liveness (no auth)', security: [], responses: { 200: ok('{status: "ok"}'), 503: ok('{status: "closing"}') } } },
      '/readyz': {
        get: { summary: 'Readiness (no auth): the queue is open and the store answered within 1 s', security: [], responses: { 200: ok('{status: "ready"}'), 503: error } },
      },
      '/': { get: { summary: 'Redirects to the dashboard, /ui/ (no auth; 404 with --no-ui)', security: [], responses: { 302: { description: 'to /ui/' }, 404: error } } },
      '/openapi.json': { get: { summary: 'This document (no auth)', security: [], responses: { 200: ok('OpenAPI 3') } } },
    },
  };
}
