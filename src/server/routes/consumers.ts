/** Consumer routes: reserve (long-poll) on /v1/topics/:topic, ack, nack and extend on /v1/tasks/:id, acks in bulk on /v1/tasks/ack. */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { DelayQError } from '../../core/errors.js';
import type { AckManyRequest, AckManyResponse, AckRequest, AckResponse, ExtendRequest, ExtendResponse, NackRequest, NackResponse, ReserveRequest, ReserveResponse } from '../../wire/types.js';
import type { RouteContext } from '../context.js';
import { HttpError } from '../errors.js';
import { ackManyResultSchema, ackResultSchema, extendResultSchema, nackResultSchema, reserveResultSchema } from '../response-schemas.js';
import { STORE_ERRORS, TASK_ID, TOPIC, apiRoute } from '../route-schema.js';
import { ackBodySchema, ackManyBodySchema, extendBodySchema, nackBodySchema, reserveBodySchema } from '../schemas.js';

const tags = ['consumers'];

export const consumerRoutes: FastifyPluginAsync<RouteContext> = async (app, { queue, limits, draining }) => {
  let waiting = 0;

  app.post<{ Params: { topic: string }; Body: ReserveRequest; Reply: ReserveResponse }>(
    '/v1/topics/:topic/reserve',
    {
      bodyLimit: limits.envelopeBytes,
      schema: apiRoute({
        operationId: 'reserveTasks',
        tags,
        summary: 'Reserve due tasks of a topic (long-poll with waitMs)',
        description: 'Each delivery must be acked or nacked with its `receipt` before `reservedUntil`, or it is delivered again. No body means all defaults.',
        path: { topic: TOPIC },
        body: reserveBodySchema,
        ok: { 200: reserveResultSchema },
        errors: ['INVALID_TOPIC', 'INVALID_OPTION', 'TOO_MANY_LONG_POLLS', ...STORE_ERRORS],
      }),
      // A reserve without a body means all defaults.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const { max, waitMs, ttrMs } = request.body;
      checkRange('max', max, 1, limits.maxReserve);
      checkRange('waitMs', waitMs, 0, limits.maxWaitMs);
      const polls = waitMs !== undefined && waitMs > 0;
      if (polls && waiting >= limits.maxLongPolls)
        throw new HttpError('TOO_MANY_LONG_POLLS', `reserve: ${limits.maxLongPolls} long-polls are already waiting; retry later`);
      const gone = abortWhenClientLeaves(reply);
      if (polls) waiting++;
      try {
        const tasks = await queue.reserve(request.params.topic, {
          ...(max !== undefined ? { max } : {}),
          ...(waitMs !== undefined ? { waitMs } : {}),
          ...(ttrMs !== undefined ? { ttrMs } : {}),
          signal: AbortSignal.any([gone.signal, draining]),
        });
        return { tasks: tasks };
      } finally {
        if (polls) waiting--;
        gone.dispose();
      }
    },
  );

  app.post<{ Params: { id: string }; Body: AckRequest; Reply: AckResponse }>(
    '/v1/tasks/:id/ack',
    {
      bodyLimit: limits.envelopeBytes,
      schema: apiRoute({
        operationId: 'ackTask',
        tags,
        summary: 'Ack a delivery: the task is completed',
        path: { id: TASK_ID },
        body: ackBodySchema,
        ok: { 200: ackResultSchema },
        errors: ['INVALID_ID', 'TASK_NOT_FOUND', 'STALE_RECEIPT', ...STORE_ERRORS],
      }),
    },
    async (request) => {
      await queue.ack(request.params.id, request.body.receipt);
      return { acked: true };
    },
  );

  // A consumer that reserved a batch settles it with one request: one store call, one commit.
  app.post<{ Body: AckManyRequest; Reply: AckManyResponse }>(
    '/v1/tasks/ack',
    {
      bodyLimit: limits.maxBatchBodyBytes,
      schema: apiRoute({
        operationId: 'ackTasks',
        tags,
        summary: 'Ack many deliveries; one answer per ack',
        body: ackManyBodySchema,
        ok: { 200: ackManyResultSchema },
        errors: ['INVALID_ID', 'BATCH_TOO_LARGE', ...STORE_ERRORS],
      }),
    },
    async (request) => {
      const { acks } = request.body;
      const outcomes = await queue.ackMany(acks);
      return {
        results: acks.map(({ id }, i) => {
          const outcome = outcomes[i];
          if (outcome === 'acked') return { id, acked: true as const };
          return outcome === 'not_found'
            ? { id, error: { code: 'TASK_NOT_FOUND' as const, message: `task ${id} not found` } }
            : { id, error: { code: 'STALE_RECEIPT' as const, message: `task ${id}: the receipt is not the current reservation's` } };
        }),
      };
    },
  );

  // A pull consumer whose work outlasts its reservation asks for more time before it runs out.
  app.post<{ Params: { id: string }; Body: ExtendRequest; Reply: ExtendResponse }>(
    '/v1/tasks/:id/extend',
    {
      bodyLimit: limits.envelopeBytes,
      schema: apiRoute({
        operationId: 'extendTask',
        tags,
        summary: 'Give a reservation in force more time: it runs out ttrMs from now',
        description:
          'Answers the new `reservedUntil`. STALE_RECEIPT when the receipt names no reservation in force (settled, expired, or run out even if not yet expired: an extension never revives one).',
        path: { id: TASK_ID },
        body: extendBodySchema,
        ok: { 200: extendResultSchema },
        errors: ['INVALID_ID', 'INVALID_OPTION', 'INVALID_ARGUMENT', 'TASK_NOT_FOUND', 'STALE_RECEIPT', ...STORE_ERRORS],
      }),
    },
    async (request) => {
      const { receipt, ttrMs } = request.body;
      return queue.extend(request.params.id, receipt, ttrMs === undefined ? {} : { ttrMs });
    },
  );

  app.post<{ Params: { id: string }; Body: NackRequest; Reply: NackResponse }>(
    '/v1/tasks/:id/nack',
    {
      bodyLimit: limits.envelopeBytes,
      schema: apiRoute({
        operationId: 'nackTask',
        tags,
        summary: 'Fail a delivery: retried after its backoff (or delayMs), or dead after its last attempt',
        path: { id: TASK_ID },
        body: nackBodySchema,
        ok: { 200: nackResultSchema },
        errors: ['INVALID_ID', 'INVALID_DELAY', 'INVALID_ARGUMENT', 'TASK_NOT_FOUND', 'STALE_RECEIPT', ...STORE_ERRORS],
      }),
    },
    async (request) => {
      const { receipt, delayMs, error } = request.body;
      return queue.nack(request.params.id, receipt, {
        ...(delayMs !== undefined ? { delayMs } : {}),
        ...(error !== undefined ? { error } : {}),
      });
    },
  );
};

/** The server's own bounds, which may be tighter than the library's. */
function checkRange(field: string, value: number | undefined, min: number, max: number): void {
  if (value !== undefined && (!Number.isInteger(value) || value < min || value > max))
    throw new DelayQError('INVALID_OPTION', `${field}: must be an integer from ${min} to ${max} (got ${value})`, { field });
}

/**
 * A long-poll whose client has hung up stops waiting, so it reserves no task it cannot
 * hand over (one reserved anyway is delivered again when its reservation runs out).
 */
function abortWhenClientLeaves(reply: FastifyReply): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onClose = (): void => {
    if (!reply.raw.writableFinished) controller.abort();
  };
  reply.raw.on('close', onClose);
  return { signal: controller.signal, dispose: () => reply.raw.off('close', onClose) };
}
