/**
 * `client.events()`: GET /v1/events (Server-Sent Events) as an async iterable. A stream
 * that drops is opened again after the server's `retry:` wait with `Last-Event-ID`, so the
 * events go on after the last one read (while the server's store keeps them); a refusal
 * (4xx) ends the iteration with its error, and so do `maxReconnects` failed openings in a
 * row. What the server sends is checked: a message that is not an event is skipped, and a
 * line longer than MAX_LINE ends the stream as BAD_RESPONSE.
 */
import type { ErrorBody } from '../wire/types.js';
import type { TaskEventTypeName, TaskEventView } from '../wire/event-types.js';
import { isWireErrorCode } from '../wire/error-codes.js';
import { DelayQClientError } from './errors.js';

export interface ClientEventsOptions {
  /** Only this topic's events. */
  topic?: string;
  /** Only these types. */
  types?: readonly TaskEventTypeName[];
  /** Resume after this event id (an `eventId` read before). */
  after?: string;
  /** Ends the iteration. */
  signal?: AbortSignal;
  /** Openings that fail in a row before the iteration throws. Default 5. */
  maxReconnects?: number;
}

export interface EventStreamOptions {
  readonly base: string;
  readonly headers: Record<string, string>;
  readonly fetch: typeof fetch;
}

/** The longest line of the stream the client takes (an event's data is at most ~2 KB). */
const MAX_LINE = 64 * 1024;
const TYPES: ReadonlySet<string> = new Set(['scheduled', 'delivered', 'acked', 'failed', 'dead', 'cancelled', 'rescheduled']);

export async function* streamEvents(http: EventStreamOptions, options: ClientEventsOptions = {}): AsyncGenerator<TaskEventView, void, undefined> {
  const query = new URLSearchParams();
  if (options.topic !== undefined) query.set('topic', options.topic);
  if (options.types !== undefined && options.types.length > 0) query.set('types', options.types.join(','));
  const url = `${http.base}/v1/events${query.size > 0 ? `?${query.toString()}` : ''}`;
  const maxReconnects = options.maxReconnects ?? 5;
  let last = options.after;
  let retryMs = 2_000;
  let failures = 0;
  const signal = options.signal;
  // A function, not a narrowed property: the signal aborts across awaits.
  const aborted = (): boolean => signal?.aborted === true;
  while (!aborted()) {
    let response: Response;
    try {
      response = await http.fetch(url, { headers: { ...http.headers, accept: 'text/event-stream', ...(last === undefined ? {} : { 'last-event-id': last }) }, ...(signal ? { signal } : {}) });
    } catch (error) {
      if (aborted()) return;
      if (++failures > maxReconnects) throw new DelayQClientError('SERVER_UNREACHABLE', `GET /v1/events: ${http.base} unreachable`, 0, undefined, { cause: error });
      await wait(retryMs, signal);
      continue;
    }
    if (!response.ok) {
      const refusal = await refusalOf(response);
      if (response.status < 500 || ++failures > maxReconnects) throw refusal;
      await wait(retryMs, signal);
      continue;
    }
    failures = 0;
    const lines = readLines(response, signal);
    let data: string[] = [];
    let id: string | undefined;
    try {
      for await (const line of lines) {
        if (line === '') {
          const event = data.length === 0 ? null : eventOf(data.join('\n'), id);
          data = [];
          if (event !== null) {
            last = event.eventId;
            yield event;
          }
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
        if (field === 'data') data.push(value);
        else if (field === 'id') id = value;
        else if (field === 'retry' && /^[0-9]{1,6}$/.test(value)) retryMs = Math.min(60_000, Math.max(100, Number(value)));
      }
    } catch (error) {
      if (aborted()) return;
      if (error instanceof DelayQClientError) throw error;
      // The connection dropped: opened again below, after the last event read.
    }
    if (aborted()) return;
    await wait(retryMs, signal);
  }
}

async function* readLines(response: Response, signal: AbortSignal | undefined): AsyncGenerator<string> {
  if (response.body === null) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const cancel = (): void => void reader.cancel().catch(() => undefined);
  signal?.addEventListener('abort', cancel, { once: true });
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += value;
      let cut: number;
      while ((cut = text.search(/\r\n|\n|\r/)) >= 0) {
        yield text.slice(0, cut);
        text = text.slice(cut + (text.startsWith('\r\n', cut) ? 2 : 1));
      }
      if (text.length > MAX_LINE) throw new DelayQClientError('BAD_RESPONSE', `GET /v1/events: a line longer than ${MAX_LINE} characters`, response.status);
    }
  } finally {
    signal?.removeEventListener('abort', cancel);
    cancel();
  }
}

/** An SSE message's data as an event, or null when it is not one. */
function eventOf(data: string, id: string | undefined): TaskEventView | null {
  if (id === undefined || id.length > 64) return null;
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const v = value as Partial<Record<keyof TaskEventView, unknown>>;
  const time = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
  if (typeof v.type !== 'string' || !TYPES.has(v.type) || typeof v.id !== 'string' || typeof v.topic !== 'string' || !time(v.at)) return null;
  if (v.attempt !== null && !time(v.attempt)) return null;
  if ((v.runAt !== undefined && !time(v.runAt)) || (v.nextRunAt !== undefined && !time(v.nextRunAt)) || (v.error !== undefined && typeof v.error !== 'string')) return null;
  return {
    eventId: id,
    type: v.type as TaskEventTypeName,
    id: v.id,
    topic: v.topic,
    attempt: v.attempt,
    at: v.at,
    ...(v.runAt === undefined ? {} : { runAt: v.runAt }),
    ...(v.nextRunAt === undefined ? {} : { nextRunAt: v.nextRunAt }),
    ...(v.error === undefined ? {} : { error: v.error }),
  };
}

async function refusalOf(response: Response): Promise<DelayQClientError> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as ErrorBody;
    if (isWireErrorCode(body.error.code)) return new DelayQClientError(body.error.code, body.error.message, response.status, body.error.details);
  } catch {
    // Not the envelope: said below.
  }
  return new DelayQClientError('BAD_RESPONSE', `GET /v1/events: ${response.status} ${text.slice(0, 200)}`, response.status);
}

function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
