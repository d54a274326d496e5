/**
 * GET /v1/events: the queue's lifecycle events as Server-Sent Events (docs/service.md,
 * "Lifecycle events"): `id:` the event's id, `event:` its type, `data:` its JSON. Guarded
 * by the token like every /v1 route (access.ts decides it by the route). A client resumes
 * with `Last-Event-ID` (or `?after=`) within the log's retention.
 *
 * Bounded: at most MAX_EVENT_STREAMS streams at once (429 TOO_MANY_STREAMS); a client that
 * reads too slowly holds back only its own reading (the feed waits for it: event-feed.ts),
 * and one whose socket takes nothing for STALL_MS is closed. A comment line every
 * HEARTBEAT_MS keeps proxies from timing the stream out and finds clients that are gone.
 */
import type { FastifyPluginAsync } from 'fastify';
import { DelayQError } from '../../core/errors.js';
import type { LoggedTaskEvent } from '../../core/events.js';
import type { RouteContext } from '../context.js';
import { HttpError } from '../errors.js';
import { STORE_ERRORS, TOPIC, apiRoute } from '../route-schema.js';

/** Event streams open at once in this server. */
export const MAX_EVENT_STREAMS = 100;
/** A comment line this often. */
export const HEARTBEAT_MS = 15_000;
/** A client whose socket takes nothing this long is dropped. */
export const STALL_MS = 30_000;
/** The longest event id a client may send back (a Redis stream id is at most 41 characters). */
const MAX_EVENT_ID = 64;
/** What an EventSource waits before it reconnects. */
const RETRY_MS = 2_000;

const TYPES_PATTERN = '^(scheduled|delivered|acked|failed|dead|cancelled|rescheduled)(,(scheduled|delivered|acked|failed|dead|cancelled|rescheduled)){0,13}$';
const EVENT_ID = { type: 'string', maxLength: MAX_EVENT_ID, pattern: '^[0-9][0-9-]{0,63}$' } as const;

const schema = apiRoute({
  operationId: 'streamEvents',
  tags: ['events'],
  summary: 'Lifecycle events as Server-Sent Events (text/event-stream)',
  description:
    'Each message: `id:` the event id, `event:` the type (scheduled, delivered, acked, failed, dead, cancelled, rescheduled), `data:` the event as JSON ' +
    '({type, id, topic, attempt, at, runAt?, nextRunAt?, error?}). From now on, or after `Last-Event-ID` (or `after`) while the store keeps it. ' +
    'At most once: an event can be lost (docs/service.md, "Lifecycle events"). 400 INVALID_OPTION when the server was started without --events.',
  query: {
    topic: { ...TOPIC, description: 'only this topic' },
    types: { type: 'string', pattern: TYPES_PATTERN, maxLength: 200, description: 'only these types, comma-separated' },
    after: { ...EVENT_ID, description: 'resume after this event id (Last-Event-ID wins when both are sent)' },
  },
  header: { 'last-event-id': { ...EVENT_ID, description: 'resume after this event id (an EventSource sends it when it reconnects)' } },
  ok: { 200: { type: 'string' } },
  produces: 'text/event-stream',
  errors: ['INVALID_OPTION', 'INVALID_ARGUMENT', 'INVALID_TOPIC', 'TOO_MANY_STREAMS', ...STORE_ERRORS],
});

interface EventsQuery {
  topic?: string;
  types?: string;
  after?: string;
}

export const eventRoutes: FastifyPluginAsync<RouteContext> = async (app, { queue, draining }) => {
  let open = 0;
  app.get<{ Querystring: EventsQuery }>('/v1/events', { schema }, async (request, reply) => {
    const header = request.headers['last-event-id'];
    const lastEventId = typeof header === 'string' && header !== '' ? header : undefined;
    if (lastEventId !== undefined && (lastEventId.length > MAX_EVENT_ID || !/^[0-9][0-9-]*$/.test(lastEventId)))
      throw new DelayQError('INVALID_ARGUMENT', 'last-event-id: not an event id', { field: 'last-event-id' });
    if (open >= MAX_EVENT_STREAMS) throw new HttpError('TOO_MANY_STREAMS', `events: ${MAX_EVENT_STREAMS} event streams are already open; retry later`);
    const ended = new AbortController();
    // Checked before anything is sent: a bad filter or id, or events off, is a 4xx like any other.
    const events = queue.events({ topic: request.query.topic, types: request.query.types, after: lastEventId ?? request.query.after, signal: AbortSignal.any([ended.signal, draining]) });
    open++;
    const raw = reply.raw;
    reply.hijack();
    raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no', 'x-content-type-options': 'nosniff' });
    raw.write(`retry: ${RETRY_MS}\n: delayq events\n\n`);
    const end = (): void => {
      ended.abort();
      void events.return?.();
    };
    raw.on('close', end);
    const heartbeat = setInterval(() => raw.write(': ping\n\n'), HEARTBEAT_MS);
    try {
      for await (const event of events) {
        if (raw.destroyed) break;
        if (!raw.write(message(event)) && !(await drained(raw, ended.signal))) {
          // Its socket holds what it was sent and takes no more: dropped, not ended (an end would wait behind it).
          if (!ended.signal.aborted) request.log.warn({ streamed: 'events' }, 'an event stream took nothing for 30 s; closed');
          raw.destroy();
          break;
        }
      }
    } catch (error) {
      request.log.error({ err: error }, 'the event stream failed');
    } finally {
      clearInterval(heartbeat);
      raw.off('close', end);
      open--;
      if (!raw.destroyed) raw.end();
    }
  });
};

function message(event: LoggedTaskEvent): string {
  const { eventId, ...data } = event;
  return `id: ${eventId}\nevent: ${event.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Resolves true once the socket drained, false after STALL_MS or once the stream ended. */
function drained(raw: NodeJS.WritableStream, ended: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (value: boolean): void => {
      clearTimeout(timer);
      raw.off('drain', onDrain);
      ended.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onDrain = (): void => done(true);
    const onAbort = (): void => done(false);
    const timer = setTimeout(() => done(false), STALL_MS);
    raw.on('drain', onDrain);
    ended.addEventListener('abort', onAbort, { once: true });
  });
}
