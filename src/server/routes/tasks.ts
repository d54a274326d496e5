/** Producer and operator routes on /v1/tasks: schedule (one or a batch), list, get, cancel (one or a batch), reschedule. */
import type { FastifyPluginAsync } from 'fastify';
import { DEFAULT_LIMITS, validateBatch, type Limits } from '../../core/task/validate.js';
import type { TaskState } from '../../core/task/model.js';
import { DelayQError } from '../../core/errors.js';
import type {
  BatchRequest,
  BatchResponse,
  CancelManyRequest,
  CancelManyResponse,
  CancelResponse,
  ListResponse,
  RescheduleRequest,
  RescheduleResponse,
  ScheduleRequest,
  ScheduleResponse,
  TaskView,
} from '../../wire/types.js';
import { scheduleBatch } from '../batch.js';
import type { RouteContext } from '../context.js';
import {
  batchBodySchema,
  cancelManyBodySchema,
  idParamsSchema,
  listQuerySchema,
  rescheduleBodySchema,
  scheduleBodySchema,
  scheduleResponseSchema,
} from '../schemas.js';

interface IdParams {
  id: string;
}

interface ListQueryString {
  topic?: string;
  state?: string;
  limit?: string;
  after?: string;
}

export const tasksRoutes: FastifyPluginAsync<RouteContext> = async (app, { queue, limits }) => {
  const coreLimits: Limits = {
    ...DEFAULT_LIMITS,
    maxPayloadBytes: limits.maxPayloadBytes,
    maxDelayMs: limits.maxDelayMs,
    maxBatch: limits.maxBatch,
  };
  const singleBodyLimit = limits.maxPayloadBytes + limits.envelopeBytes;

  app.post<{ Body: ScheduleRequest; Reply: ScheduleResponse }>(
    '/v1/tasks',
    { bodyLimit: singleBodyLimit, schema: { body: scheduleBodySchema, response: { 200: scheduleResponseSchema, 201: scheduleResponseSchema } } },
    async (request, reply) => {
      const result = await queue.schedule(request.body);
      return reply.code(result.created ? 201 : 200).send(result);
    },
  );

  app.post<{ Body: BatchRequest; Reply: BatchResponse }>(
    '/v1/tasks/batch',
    { bodyLimit: limits.maxBatchBodyBytes, schema: { body: batchBodySchema } },
    async (request) => {
      const { tasks } = request.body;
      validateBatch(tasks, coreLimits);
      return { results: await scheduleBatch(queue, tasks, coreLimits) };
    },
  );

  // Up to maxBatch ids (BATCH_TOO_LARGE beyond); one bad id rejects the request and cancels nothing.
  app.post<{ Body: CancelManyRequest; Reply: CancelManyResponse }>(
    '/v1/tasks/cancel',
    { bodyLimit: limits.maxBatchBodyBytes, schema: { body: cancelManyBodySchema } },
    async (request) => {
      const { ids } = request.body;
      const cancelled = await queue.cancelMany(ids);
      return { results: ids.map((id, i) => ({ id, cancelled: cancelled[i] === true })) };
    },
  );

  app.get<{ Querystring: ListQueryString; Reply: ListResponse }>('/v1/tasks', { schema: { querystring: listQuerySchema } }, async (request) => {
    const { topic, state, limit, after } = request.query;
    const pageSize = limit === undefined ? 100 : Number(limit);
    const tasks = await queue.list({
      ...(topic !== undefined ? { topic } : {}),
      ...(state !== undefined ? { state: state as TaskState } : {}),
      ...(after !== undefined ? { afterId: after } : {}),
      limit: pageSize,
    });
    const last = tasks.at(-1);
    return { tasks: tasks, next: tasks.length === pageSize && last !== undefined ? last.id : null };
  });

  app.get<{ Params: IdParams; Reply: TaskView }>('/v1/tasks/:id', { schema: { params: idParamsSchema } }, async (request) => {
    const task = await queue.get(request.params.id);
    if (task === null) throw notFound(request.params.id);
    return task;
  });

  app.delete<{ Params: IdParams; Reply: CancelResponse }>('/v1/tasks/:id', { schema: { params: idParamsSchema } }, async (request) => {
    const { id } = request.params;
    const outcome = await queue.cancel(id, { outcome: true });
    if (outcome === 'cancelled') return { cancelled: true };
    throw await whyNot(id, outcome);
  });

  app.patch<{ Params: IdParams; Body: RescheduleRequest; Reply: RescheduleResponse }>(
    '/v1/tasks/:id',
    { bodyLimit: limits.envelopeBytes, schema: { params: idParamsSchema, body: rescheduleBodySchema } },
    async (request) => {
      const { id } = request.params;
      const when = request.body;
      if (when.delayMs === undefined && when.runAt === undefined)
        throw new DelayQError('INVALID_DELAY', 'delayMs: give delayMs or runAt', { field: 'delayMs' });
      const outcome = await queue.reschedule(id, when, { outcome: true });
      if (outcome.status === 'rescheduled') return { id, runAt: outcome.runAt };
      throw await whyNot(id, outcome.status);
    },
  );

  /** 404 for no such task, 409 for one that is no longer pending (its state read for the message). */
  async function whyNot(id: string, outcome: 'not_found' | 'not_pending'): Promise<DelayQError> {
    if (outcome === 'not_found') return notFound(id);
    const state = (await queue.get(id))?.state ?? 'gone';
    return new DelayQError('TASK_NOT_PENDING', `task ${id} is ${state}, not pending`, { id, state });
  }
};

function notFound(id: string): DelayQError {
  return new DelayQError('TASK_NOT_FOUND', `task ${id} not found`, { id });
}
