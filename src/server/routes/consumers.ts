/** Consumer routes: reserve (long-poll) on /v1/topics/:topic, ack and nack on /v1/tasks/:id, acks in bulk on /v1/tasks/ack. */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { DelayQError } from '../../core/errors.js';
import type { AckManyRequest, AckManyResponse, AckRequest, AckResponse, NackRequest, NackResponse, ReserveRequest, ReserveResponse } from '../../wire/types.js';
import type { RouteContext } from '../context.js';
import { HttpError } from '../errors.js';
import { ackBodySchema, ackManyBodySchema, idParamsSchema, nackBodySchema, reserveBodySchema, topicParamsSchema } from '../schemas.js';

export const consumerRoutes: FastifyPluginAsync<RouteContext> = async (app, { queue, limits, draining }) => {
  let waiting = 0;

  app.post<{ Params: { topic: string }; Body: ReserveRequest; Reply: ReserveResponse }>(
    '/v1/topics/:topic/reserve',
    {
      bodyLimit: limits.envelopeBytes,
      schema: { params: topicParamsSchema, body: reserveBodySchema },
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
    { bodyLimit: limits.envelopeBytes, schema: { params: idParamsSchema, body: ackBodySchema } },
    async (request) => {
      await queue.ack(request.params.id, request.body.receipt);
      return { acked: true };
    },
  );

  // A consumer that reserved a batch settles it with one request: one store call, one commit.
  app.post<{ Body: AckManyRequest; Reply: AckManyResponse }>(
    '/v1/tasks/ack',
    { bodyLimit: limits.maxBatchBodyBytes, schema: { body: ackManyBodySchema } },
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

  app.post<{ Params: { id: string }; Body: NackRequest; Reply: NackResponse }>(
    '/v1/tasks/:id/nack',
    { bodyLimit: limits.envelopeBytes, schema: { params: idParamsSchema, body: nackBodySchema } },
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
