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
import { batchResultSchema, cancelManyResultSchema, cancelResultSchema, rescheduleResultSchema, scheduleResultSchema, taskPageSchema, taskSchema } from '../response-schemas.js';
import { STORE_ERRORS, TASK_ID, TOPIC, apiRoute, intQuery } from '../route-schema.js';
import { batchBodySchema, cancelManyBodySchema, rescheduleBodySchema, scheduleBodySchema } from '../schemas.js';
import { TASK_STATES } from '../../wire/types.js';
import { TRACE_HEADERS, traceOptionsOf, withTrace } from '../trace-headers.js';

const tags = ['tasks'];
const SCHEDULE_ERRORS = ['INVALID_TOPIC', 'INVALID_ID', 'INVALID_DELAY', 'INVALID_PAYLOAD', 'PAYLOAD_TOO_LARGE', 'PAYLOAD_TOO_DEEP', 'INVALID_OPTION', 'INVALID_URL', 'PUSH_NO_SECRET', ...STORE_ERRORS] as const;

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
    {
      bodyLimit: singleBodyLimit,
      schema: apiRoute({
        operationId: 'scheduleTask',
        tags,
        summary: 'Schedule a task',
        description: 'With `url`: pushed to that URL when due, whatever its topic. 201 when created; 200 when a task with this `id` existed (nothing changed).',
        header: TRACE_HEADERS,
        body: scheduleBodySchema,
        ok: { 201: scheduleResultSchema, 200: scheduleResultSchema },
        errors: SCHEDULE_ERRORS,
      }),
    },
    async (request, reply) => {
      const result = await queue.schedule(withTrace(request.body, traceOptionsOf(request.headers)) as ScheduleRequest);
      return reply.code(result.created ? 201 : 200).send(result);
    },
  );

  app.post<{ Body: BatchRequest; Reply: BatchResponse }>(
    '/v1/tasks/batch',
    {
      bodyLimit: limits.maxBatchBodyBytes,
      schema: apiRoute({
        operationId: 'scheduleTasks',
        tags,
        summary: 'Schedule many tasks; one result per task',
        description: 'Each task is checked alone: a bad one fails in its `results[i]` (its index in `error.details.index`), the others are scheduled.',
        header: TRACE_HEADERS,
        body: batchBodySchema,
        ok: { 200: batchResultSchema },
        errors: ['BATCH_TOO_LARGE', ...SCHEDULE_ERRORS],
      }),
    },
    async (request) => {
      const { tasks } = request.body;
      validateBatch(tasks, coreLimits);
      const trace = traceOptionsOf(request.headers);
      return { results: await scheduleBatch(queue, trace === null ? tasks : tasks.map((task) => withTrace(task, trace)), coreLimits) };
    },
  );

  // Up to maxBatch ids (BATCH_TOO_LARGE beyond); one bad id rejects the request and cancels nothing.
  app.post<{ Body: CancelManyRequest; Reply: CancelManyResponse }>(
    '/v1/tasks/cancel',
    {
      bodyLimit: limits.maxBatchBodyBytes,
      schema: apiRoute({
        operationId: 'cancelTasks',
        tags,
        summary: 'Cancel many tasks; one answer per id',
        description: '`cancelled` is true for each task that was pending and is now cancelled. One bad id rejects the request and cancels nothing.',
        body: cancelManyBodySchema,
        ok: { 200: cancelManyResultSchema },
        errors: ['INVALID_ID', 'BATCH_TOO_LARGE', ...STORE_ERRORS],
      }),
    },
    async (request) => {
      const { ids } = request.body;
      const cancelled = await queue.cancelMany(ids);
      return { results: ids.map((id, i) => ({ id, cancelled: cancelled[i] === true })) };
    },
  );

  const listSchema = apiRoute({
    operationId: 'listTasks',
    tags,
    summary: 'List tasks in id order',
    description:
      'A page of at most `limit` tasks after `after`, and fewer once they pass 4 MiB of payloads, errors and attempt history (the page ends after the task that passes it: an answer is at most 4 MiB plus one task); pass `next` as `after` for the next page (null on the last).',
    query: {
      topic: { ...TOPIC, description: 'only this topic' },
      state: { type: 'string', enum: TASK_STATES, description: 'only tasks in this state' },
      limit: intQuery(1, 10_000, 100, 6, 'most tasks in the page'),
      after: { ...TASK_ID, description: 'the `next` of the previous page' },
    },
    ok: { 200: taskPageSchema },
    errors: ['INVALID_TOPIC', 'INVALID_ID', 'INVALID_OPTION', ...STORE_ERRORS],
  });
  app.get<{ Querystring: ListQueryString; Reply: ListResponse }>('/v1/tasks', { schema: listSchema }, async (request) => {
    const { topic, state, limit, after } = request.query;
    return queue.listPage({
      ...(topic !== undefined ? { topic } : {}),
      ...(state !== undefined ? { state: state as TaskState } : {}),
      ...(after !== undefined ? { afterId: after } : {}),
      limit: limit === undefined ? 100 : Number(limit),
    });
  });

  const getSchema = apiRoute({ operationId: 'getTask', tags, summary: 'Read a task', path: { id: TASK_ID }, ok: { 200: taskSchema }, errors: ['INVALID_ID', 'TASK_NOT_FOUND', ...STORE_ERRORS] });
  app.get<{ Params: IdParams; Reply: TaskView }>('/v1/tasks/:id', { schema: getSchema }, async (request) => {
    const task = await queue.get(request.params.id);
    if (task === null) throw notFound(request.params.id);
    return task;
  });

  const cancelSchema = apiRoute({
    operationId: 'cancelTask',
    tags,
    summary: 'Cancel a pending task',
    path: { id: TASK_ID },
    ok: { 200: cancelResultSchema },
    errors: ['INVALID_ID', 'TASK_NOT_FOUND', 'TASK_NOT_PENDING', ...STORE_ERRORS],
  });
  app.delete<{ Params: IdParams; Reply: CancelResponse }>('/v1/tasks/:id', { schema: cancelSchema }, async (request) => {
    const { id } = request.params;
    const outcome = await queue.cancel(id, { outcome: true });
    if (outcome === 'cancelled') return { cancelled: true };
    throw await whyNot(id, outcome);
  });

  app.patch<{ Params: IdParams; Body: RescheduleRequest; Reply: RescheduleResponse }>(
    '/v1/tasks/:id',
    {
      bodyLimit: limits.envelopeBytes,
      schema: apiRoute({
        operationId: 'rescheduleTask',
        tags,
        summary: 'Move a pending task (give delayMs or runAt)',
        path: { id: TASK_ID },
        body: rescheduleBodySchema,
        ok: { 200: rescheduleResultSchema },
        errors: ['INVALID_ID', 'INVALID_DELAY', 'TASK_NOT_FOUND', 'TASK_NOT_PENDING', ...STORE_ERRORS],
      }),
    },
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
