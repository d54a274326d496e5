/**
 * Recurring schedule routes (docs/cron.md): PUT, GET, DELETE /v1/schedules/:id, GET (a page
 * by id) and PUT (many) /v1/schedules, POST /v1/schedules/:id/pause and /resume, GET
 * /v1/schedules/:id/next?n=.
 */
import type { FastifyPluginAsync } from 'fastify';
import { DelayQError } from '../../core/errors.js';
import type { RecurringScheduleInfo } from '../../engine/schedules.js';
import type { RecurringDeleteResponse, RecurringListResponse, RecurringManyRequest, RecurringManyResponse, RecurringNextResponse, RecurringRequest, RecurringResponse, RecurringView } from '../../wire/types.js';
import type { RouteContext } from '../context.js';
import { idParamsSchema, nextQuerySchema, scheduleDefinitionSchema, scheduleDefinitionsSchema, scheduleListQuerySchema } from '../schemas.js';

export const scheduleRoutes: FastifyPluginAsync<RouteContext> = async (app, { queue, limits }) => {
  // 201 when there was no schedule with this id, 200 otherwise (`changed` says whether anything changed).
  // The body may hold a payload as large as a task's (PUT /v1/schedules takes them too).
  app.put<{ Params: { id: string }; Body: RecurringRequest; Reply: RecurringResponse }>(
    '/v1/schedules/:id',
    { bodyLimit: limits.maxPayloadBytes + limits.envelopeBytes, schema: { params: idParamsSchema, body: scheduleDefinitionSchema } },
    async (request, reply) => {
      const { schedule, created, changed } = await queue.schedules.upsert(request.params.id, request.body);
      return reply.code(created ? 201 : 200).send({ schedule: view(schedule), changed });
    },
  );

  // Many in one call: every definition is checked first (one bad one: 400 naming its index, nothing stored).
  app.put<{ Body: RecurringManyRequest; Reply: RecurringManyResponse }>(
    '/v1/schedules',
    { bodyLimit: limits.maxBatchBodyBytes, schema: { body: scheduleDefinitionsSchema } },
    async (request) => {
      const results = await queue.schedules.upsertMany(request.body);
      return { results: results.map(({ schedule, created, changed }) => ({ schedule: view(schedule), created, changed })) };
    },
  );

  app.get<{ Params: { id: string }; Reply: RecurringResponse }>('/v1/schedules/:id', { schema: { params: idParamsSchema } }, async (request) => {
    const schedule = await queue.schedules.get(request.params.id);
    if (schedule === null) throw notFound(request.params.id);
    return { schedule: view(schedule) };
  });

  // Pages by id, as GET /v1/tasks: `next` is the `after` of the next page, null on the last.
  app.get<{ Querystring: { limit?: string; after?: string }; Reply: RecurringListResponse }>(
    '/v1/schedules',
    { schema: { querystring: scheduleListQuerySchema } },
    async (request) => {
      const { limit, after } = request.query;
      const page = await queue.schedules.listPage({ ...(limit !== undefined ? { limit: Number(limit) } : {}), ...(after !== undefined ? { afterId: after } : {}) });
      return { schedules: page.schedules.map(view), next: page.next };
    },
  );

  app.delete<{ Params: { id: string }; Reply: RecurringDeleteResponse }>('/v1/schedules/:id', { schema: { params: idParamsSchema } }, async (request) => {
    if (!(await queue.schedules.remove(request.params.id))) throw notFound(request.params.id);
    return { deleted: true };
  });

  app.post<{ Params: { id: string }; Reply: RecurringResponse }>('/v1/schedules/:id/pause', { schema: { params: idParamsSchema } }, async (request) => ({
    schedule: view(await queue.schedules.pause(request.params.id)),
  }));

  app.post<{ Params: { id: string }; Reply: RecurringResponse }>('/v1/schedules/:id/resume', { schema: { params: idParamsSchema } }, async (request) => ({
    schedule: view(await queue.schedules.resume(request.params.id)),
  }));

  app.get<{ Params: { id: string }; Querystring: { n?: string }; Reply: RecurringNextResponse }>(
    '/v1/schedules/:id/next',
    { schema: { params: idParamsSchema, querystring: nextQuerySchema } },
    async (request) => ({ times: await queue.schedules.next(request.params.id, request.query.n === undefined ? 10 : Number(request.query.n)) }),
  );
};

function notFound(id: string): DelayQError {
  return new DelayQError('SCHEDULE_NOT_FOUND', `schedule ${id}: not found`, { id });
}

function view(s: RecurringScheduleInfo): RecurringView {
  return { ...s, backoff: { ...s.backoff } };
}
