/**
 * Recurring schedule routes (docs/cron.md): PUT, GET, DELETE /v1/schedules/:id, GET (a page
 * by id) and PUT (many) /v1/schedules, POST /v1/schedules/:id/pause and /resume, GET
 * /v1/schedules/:id/next?n=, and POST /v1/schedules/preview (a rule's times, no schedule).
 */
import type { FastifyPluginAsync } from 'fastify';
import { DelayQError } from '../../core/errors.js';
import type { RecurringScheduleInfo } from '../../engine/recurring/recurring-schedules.js';
import type { RecurringDeleteResponse, RecurringListResponse, RecurringManyRequest, RecurringManyResponse, RecurringNextResponse, RecurringPreviewRequest, RecurringRequest, RecurringResponse, RecurringView } from '../../wire/types.js';
import type { RouteContext } from '../context.js';
import { deletedSchema, recurringManyResultSchema, recurringNextSchema, recurringPageSchema, recurringResultSchema } from '../response-schemas.js';
import { SCHEDULE_ID, STORE_ERRORS, apiRoute, intQuery } from '../route-schema.js';
import { scheduleDefinitionSchema, scheduleDefinitionsSchema, schedulePreviewBodySchema } from '../schemas.js';

const tags = ['schedules'];
const path = { id: SCHEDULE_ID };
const ONE = ['INVALID_ID', 'SCHEDULE_NOT_FOUND', ...STORE_ERRORS] as const;

export const scheduleRoutes: FastifyPluginAsync<RouteContext> = async (app, { queue, limits }) => {
  // 201 when there was no schedule with this id, 200 otherwise (`changed` says whether anything changed).
  // The body may hold a payload as large as a task's (PUT /v1/schedules takes them too).
  app.put<{ Params: { id: string }; Body: RecurringRequest; Reply: RecurringResponse }>(
    '/v1/schedules/:id',
    {
      bodyLimit: limits.maxPayloadBytes + limits.envelopeBytes,
      schema: apiRoute({
        operationId: 'putSchedule',
        tags,
        summary: 'Create (201) or change (200) a recurring schedule: cron with tz, or everyMs',
        description: 'The same definition again changes nothing (`changed: false`). 400 INVALID_SCHEDULE with the reason.',
        path,
        body: scheduleDefinitionSchema,
        ok: { 201: recurringResultSchema, 200: recurringResultSchema },
        errors: ['INVALID_ID', 'INVALID_SCHEDULE', 'INVALID_TOPIC', 'INVALID_PAYLOAD', 'PAYLOAD_TOO_LARGE', 'PAYLOAD_TOO_DEEP', 'INVALID_OPTION', 'INVALID_URL', 'PUSH_NO_SECRET', ...STORE_ERRORS],
      }),
    },
    async (request, reply) => {
      const { schedule, created, changed } = await queue.schedules.upsert(request.params.id, request.body);
      return reply.code(created ? 201 : 200).send({ schedule: view(schedule), changed });
    },
  );

  // Many in one call: every definition is checked first (one bad one: 400 naming its index, nothing stored).
  app.put<{ Body: RecurringManyRequest; Reply: RecurringManyResponse }>(
    '/v1/schedules',
    {
      bodyLimit: limits.maxBatchBodyBytes,
      schema: apiRoute({
        operationId: 'putSchedules',
        tags,
        summary: 'Create or change many recurring schedules in one call',
        description: 'An array of definitions, each with its `id`; all are checked first (400 naming the index, nothing stored).',
        body: scheduleDefinitionsSchema,
        ok: { 200: recurringManyResultSchema },
        errors: ['INVALID_ID', 'INVALID_SCHEDULE', 'INVALID_TOPIC', 'INVALID_PAYLOAD', 'PAYLOAD_TOO_LARGE', 'PAYLOAD_TOO_DEEP', 'INVALID_OPTION', 'INVALID_URL', 'PUSH_NO_SECRET', 'BATCH_TOO_LARGE', ...STORE_ERRORS],
      }),
    },
    async (request) => {
      const results = await queue.schedules.upsertMany(request.body);
      return { results: results.map(({ schedule, created, changed }) => ({ schedule: view(schedule), created, changed })) };
    },
  );

  app.get<{ Params: { id: string }; Reply: RecurringResponse }>('/v1/schedules/:id', { schema: apiRoute({ operationId: 'getSchedule', tags, summary: 'A recurring schedule', path, ok: { 200: recurringResultSchema }, errors: ONE }) }, async (request) => {
    const schedule = await queue.schedules.get(request.params.id);
    if (schedule === null) throw notFound(request.params.id);
    return { schedule: view(schedule) };
  });

  // Pages by id, as GET /v1/tasks: `next` is the `after` of the next page, null on the last.
  app.get<{ Querystring: { limit?: string; after?: string }; Reply: RecurringListResponse }>(
    '/v1/schedules',
    {
      schema: apiRoute({
        operationId: 'listSchedules',
        tags,
        summary: 'A page of the recurring schedules, by id',
        description: 'At most `limit` after `after`, fewer when their payloads pass 4 MiB; pass `next` as `after` for the next page (null on the last).',
        query: { limit: intQuery(1, 1_000, 100, 6, 'most schedules in the page'), after: { ...SCHEDULE_ID, description: 'the `next` of the previous page' } },
        ok: { 200: recurringPageSchema },
        errors: ['INVALID_OPTION', 'INVALID_ID', ...STORE_ERRORS],
      }),
    },
    async (request) => {
      const { limit, after } = request.query;
      const page = await queue.schedules.listPage({ ...(limit !== undefined ? { limit: Number(limit) } : {}), ...(after !== undefined ? { afterId: after } : {}) });
      return { schedules: page.schedules.map(view), next: page.next };
    },
  );

  app.delete<{ Params: { id: string }; Reply: RecurringDeleteResponse }>('/v1/schedules/:id', { schema: apiRoute({ operationId: 'deleteSchedule', tags, summary: 'Delete a schedule and cancel its occurrences not yet due', path, ok: { 200: deletedSchema }, errors: ONE }) }, async (request) => {
    if (!(await queue.schedules.remove(request.params.id))) throw notFound(request.params.id);
    return { deleted: true };
  });

  app.post<{ Params: { id: string }; Reply: RecurringResponse }>('/v1/schedules/:id/pause', { schema: apiRoute({ operationId: 'pauseSchedule', tags, summary: 'Pause: no occurrence created, those created ahead cancelled', path, ok: { 200: recurringResultSchema }, errors: ONE }) }, async (request) => ({
    schedule: view(await queue.schedules.pause(request.params.id)),
  }));

  app.post<{ Params: { id: string }; Reply: RecurringResponse }>('/v1/schedules/:id/resume', { schema: apiRoute({ operationId: 'resumeSchedule', tags, summary: 'Resume from the first occurrence at or after now', path, ok: { 200: recurringResultSchema }, errors: ONE }) }, async (request) => ({
    schedule: view(await queue.schedules.resume(request.params.id)),
  }));

  // A rule with no schedule (`delayq cron next --cron`): checked as at upsert, nothing stored.
  // POST beside PUT /v1/schedules/:id as POST /v1/tasks/batch is beside /v1/tasks/:id: a GET
  // of /v1/schedules/preview is the schedule named "preview".
  app.post<{ Body: RecurringPreviewRequest; Reply: RecurringNextResponse }>(
    '/v1/schedules/preview',
    {
      bodyLimit: limits.envelopeBytes,
      schema: apiRoute({
        operationId: 'previewSchedule',
        tags,
        summary: 'Preview the next n times a rule (cron with tz, or everyMs) would fire, with no schedule stored',
        description: 'The rule is checked as PUT /v1/schedules/:id checks it (400 INVALID_SCHEDULE with the reason), with the same time zone and daylight-saving rules; times at or after now (or startAt), at most `limit`.',
        body: schedulePreviewBodySchema,
        ok: { 200: recurringNextSchema },
        errors: ['INVALID_SCHEDULE', 'INVALID_OPTION', 'QUEUE_CLOSED'],
      }),
    },
    async (request) => {
      const { n, ...rule } = request.body;
      return { times: await queue.schedules.preview(rule, n ?? 10) };
    },
  );

  app.get<{ Params: { id: string }; Querystring: { n?: string }; Reply: RecurringNextResponse }>(
    '/v1/schedules/:id/next',
    {
      schema: apiRoute({
        operationId: 'nextScheduleTimes',
        tags,
        summary: 'Preview the next n occurrence times (epoch ms)',
        path,
        query: { n: intQuery(1, 1_000, 10, 4, 'how many times') },
        ok: { 200: recurringNextSchema },
        errors: [...ONE, 'INVALID_OPTION'],
      }),
    },
    async (request) => ({ times: await queue.schedules.next(request.params.id, request.query.n === undefined ? 10 : Number(request.query.n)) }),
  );
};

function notFound(id: string): DelayQError {
  return new DelayQError('SCHEDULE_NOT_FOUND', `schedule ${id}: not found`, { id });
}

function view(s: RecurringScheduleInfo): RecurringView {
  return { ...s, backoff: { ...s.backoff } };
}
