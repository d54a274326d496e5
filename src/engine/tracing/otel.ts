/**
 * The OpenTelemetry glue (tracing.ts loads it once, lazily): spans of a schedule call
 * (PRODUCER), of a delivery handed out (CONSUMER) and of a push (CLIENT), through the
 * application's own @opentelemetry/api, an optional peer dependency; delayq bundles no SDK.
 * A schedule span is a child of the call's `traceparent` (else of the active context), and
 * its own context is what the tasks store, so a delivery's and a push's spans are its
 * children, in the scheduling trace, and link to it. Nothing here runs without the API.
 */
import type * as Api from '@opentelemetry/api';
import type { Delivery, NewTaskRecord } from '../../core/task/model.js';
import { childTraceparent, traceHeaders } from '../../core/trace-context.js';
import { newSpanId, type Tracer } from './tracing.js';

type OtelApi = typeof Api;

/** The tracer over the API installed, or null when it cannot be imported. */
export async function loadOtelTracer(): Promise<Tracer | null> {
  let api: OtelApi;
  try {
    api = await import('@opentelemetry/api');
  } catch {
    return null;
  }
  return new OtelTracer(api);
}

const SYSTEM = { 'messaging.system': 'delayq' } as const;

class OtelTracer implements Tracer {
  private readonly tracer: Api.Tracer;

  constructor(private readonly api: OtelApi) {
    this.tracer = api.trace.getTracer('delayq');
  }

  async schedule<T>(records: readonly NewTaskRecord[], write: (records: readonly NewTaskRecord[]) => Promise<T>): Promise<T> {
    const given = records.find((r) => r.trace !== undefined)?.trace;
    const parent = given === undefined ? null : this.spanContextOf(given);
    const context = parent === null ? this.api.context.active() : this.api.trace.setSpanContext(this.api.context.active(), parent);
    const first = records[0]!;
    const attributes: Api.Attributes = { ...SYSTEM, 'messaging.operation.type': 'send', 'messaging.destination.name': records.every((r) => r.topic === first.topic) ? first.topic : '(several)' };
    if (records.length === 1) attributes['messaging.message.id'] = first.id;
    else attributes['messaging.batch.message_count'] = records.length;
    const span = this.tracer.startSpan(`schedule ${String(attributes['messaging.destination.name'])}`, { kind: this.api.SpanKind.PRODUCER, attributes }, context);
    const own = span.spanContext();
    // A tracer that made no span of its own (none registered) hands back the parent's: the tasks keep the call's trace.
    const trace = this.api.trace.isSpanContextValid(own) && own.spanId !== parent?.spanId ? traceOf(own) : undefined;
    const stored = trace === undefined ? records : records.map((r) => (r.trace === undefined || r.trace === given ? { ...r, trace } : r));
    return this.ended(span, write(stored));
  }

  delivered(delivery: Delivery): void {
    const parent = delivery.traceparent === undefined ? null : this.spanContextOf(delivery.traceparent, delivery.tracestate);
    if (parent === null) return;
    const attributes: Api.Attributes = { ...SYSTEM, 'messaging.operation.type': 'receive', 'messaging.destination.name': delivery.topic, 'messaging.message.id': delivery.id, 'delayq.attempt': delivery.attempt };
    const context = this.api.trace.setSpanContext(this.api.context.active(), parent);
    this.tracer.startSpan(`deliver ${delivery.topic}`, { kind: this.api.SpanKind.CONSUMER, attributes, links: [{ context: parent }] }, context).end();
  }

  push<T>(delivery: Delivery & { readonly traceparent: string }, origin: string, send: (traceparent: string) => Promise<T>, failure: (answer: T) => string | null): Promise<T> {
    const parent = this.spanContextOf(delivery.traceparent, delivery.tracestate);
    const attributes: Api.Attributes = { ...SYSTEM, 'messaging.operation.type': 'send', 'messaging.destination.name': delivery.topic, 'messaging.message.id': delivery.id, 'delayq.attempt': delivery.attempt, 'server.address': origin };
    const context = parent === null ? this.api.context.active() : this.api.trace.setSpanContext(this.api.context.active(), parent);
    const span = this.tracer.startSpan(`push ${delivery.topic}`, { kind: this.api.SpanKind.CLIENT, attributes, ...(parent === null ? {} : { links: [{ context: parent }] }) }, context);
    const own = span.spanContext();
    // The receiver's parent is this span, or (no span of its own) a new id under the stored trace.
    const spanId = this.api.trace.isSpanContextValid(own) && own.spanId !== parent?.spanId ? own.spanId : newSpanId();
    return this.ended(span, send(childTraceparent(delivery.traceparent, spanId)), failure);
  }

  /** Ends `span` when `work` settles, an error (thrown, or read from its answer by `failure`) recorded on it. */
  private async ended<T>(span: Api.Span, work: Promise<T>, failure?: (answer: T) => string | null): Promise<T> {
    try {
      const answer = await work;
      const error = failure?.(answer) ?? null;
      if (error !== null) span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: error });
      return answer;
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  }

  /** The remote span context of a stored trace (`traceparent tracestate`) or of headers; null when it does not read as one. */
  private spanContextOf(traceparent: string, tracestate?: string): Api.SpanContext | null {
    const headers = traceHeaders(tracestate === undefined ? traceparent : `${traceparent} ${tracestate}`);
    if (headers === null) return null;
    const [, traceId = '', spanId = '', flags = '00'] = headers.traceparent.split('-');
    const context: Api.SpanContext = { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true };
    return headers.tracestate === undefined ? context : { ...context, traceState: this.api.createTraceState(headers.tracestate) };
  }
}

/** A span context as the stored trace: its traceparent, and its tracestate after a space. */
function traceOf(context: Api.SpanContext): string {
  const traceparent = `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
  const state = context.traceState?.serialize() ?? '';
  return state === '' ? traceparent : `${traceparent} ${state}`;
}
