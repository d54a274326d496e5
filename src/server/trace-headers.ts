/**
 * The W3C trace context headers of a scheduling request (POST /v1/tasks, /v1/tasks/batch):
 * `traceparent` and `tracestate` become the tasks' own options, which the core checks
 * (core/trace-context.ts): a malformed header is ignored, never refused, as the W3C asks of
 * a receiver; a repeated `traceparent` arrives joined with ', ' and is malformed.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ParameterMap } from './route-schema.js';

/** The OpenAPI parameters of the two headers. */
export const TRACE_HEADERS: ParameterMap = {
  traceparent: {
    type: 'string',
    pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}',
    description: "W3C Trace Context: kept with the task(s); a push sends a child of it, a reserve answers it (docs/service.md, \"Trace context\"). A malformed one is ignored.",
  },
  tracestate: { type: 'string', maxLength: 512, description: 'W3C Trace Context, with traceparent; ignored when malformed or over 512 characters' },
};

type TraceOptions = { traceparent: string; tracestate?: string };

/** The request's trace options, or null when it has no `traceparent` header. */
export function traceOptionsOf(headers: IncomingHttpHeaders): TraceOptions | null {
  const { traceparent, tracestate } = headers;
  if (typeof traceparent !== 'string') return null;
  return typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent };
}

/** A task of the request with its trace options; anything but an object is left for the core to refuse. */
export function withTrace(task: unknown, trace: TraceOptions | null): unknown {
  if (trace === null || typeof task !== 'object' || task === null || Array.isArray(task)) return task;
  return { ...task, ...trace };
}
