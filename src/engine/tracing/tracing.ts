/**
 * Trace context on the engine's paths (docs/library.md, "Trace context"): a schedule call's
 * store write, a delivery handed out, and a push sent. Without OpenTelemetry the trace a
 * task was scheduled with is only carried: a push sends a child of it (same trace id, a
 * new parent id). With an OpenTelemetry API set up in this process (a tracer provider, a
 * propagator or a context manager registered: the API's global is there), `otel.ts` is
 * imported once, lazily, and makes spans too. Nothing is imported before that, and a
 * process without @opentelemetry/api installed imports nothing at all.
 */
import { randomBytes } from 'node:crypto';
import type { Delivery, NewTaskRecord } from '../../core/task/model.js';
import { childTraceparent } from '../../core/trace-context.js';

/** The spans of the engine's paths: otel.ts is the one implementation. */
export interface Tracer {
  /** Runs a schedule call's write in a span; `write` gets the records to store (with the span's trace context). */
  schedule<T>(records: readonly NewTaskRecord[], write: (records: readonly NewTaskRecord[]) => Promise<T>): Promise<T>;
  /** A delivery of a task with a trace context was handed to its consumer. */
  delivered(delivery: Delivery): void;
  /** Runs a push of a delivery with a trace context in a span; `send` gets the `traceparent` to send; `failure` reads an answer's error, if any. */
  push<T>(delivery: Delivery & { readonly traceparent: string }, origin: string, send: (traceparent: string) => Promise<T>, failure: (answer: T) => string | null): Promise<T>;
}

/** Where the OpenTelemetry API keeps its registrations (its major version 1). */
const OTEL_API_GLOBAL = Symbol.for('opentelemetry.js.api.1');

let tracer: Tracer | null = null;
let loading: Promise<void> | null = null;

/**
 * The tracer in force, or null: none yet, or no OpenTelemetry in this process. The first
 * call after an OpenTelemetry API was set up starts loading it (a queue's construction
 * calls this, so deliveries get spans in a process that only consumes).
 */
export function activeTracer(): Tracer | null {
  if (tracer === null && loading === null && (globalThis as Record<symbol, unknown>)[OTEL_API_GLOBAL] !== undefined) {
    loading = import('./otel.js')
      .then(async ({ loadOtelTracer }) => {
        tracer = await loadOtelTracer();
      })
      // A tracer that cannot load leaves tasks traced by their context alone, never a schedule refused.
      .catch(() => undefined);
  }
  return tracer;
}

/** A schedule call's store write, in a span when a tracer is in force (awaiting its load, once). */
export async function scheduleTraced<T>(records: readonly NewTaskRecord[], write: (records: readonly NewTaskRecord[]) => Promise<T>): Promise<T> {
  if (activeTracer() === null && loading !== null) await loading;
  return tracer === null ? write(records) : tracer.schedule(records, write);
}

/**
 * A push request: for a task with a trace context, its headers get `traceparent` (a child
 * of the stored one: delayq's push span, or a new random parent id) and `tracestate`, in
 * place of any the subscription's own headers name in another case.
 */
export function sendTraced<T>(
  delivery: Delivery,
  origin: string,
  headers: Record<string, string>,
  send: (headers: Record<string, string>) => Promise<T>,
  failure: (answer: T) => string | null,
): Promise<T> {
  const { traceparent, tracestate } = delivery;
  if (traceparent === undefined) return send(headers);
  // Copied by entries (own data properties, whatever the names), without the names delayq sets here.
  const kept = Object.fromEntries(Object.entries(headers).filter(([name]) => !/^trace(parent|state)$/i.test(name)));
  const withTrace = (parent: string): Promise<T> => send(tracestate === undefined ? { ...kept, traceparent: parent } : { ...kept, traceparent: parent, tracestate });
  const active = activeTracer();
  if (active === null) return withTrace(childTraceparent(traceparent, newSpanId()));
  return active.push({ ...delivery, traceparent }, origin, withTrace, failure);
}

/** A delivery handed out: a span when a tracer is in force and the task has a trace context. */
export function tracedDelivery(delivery: Delivery): void {
  if (delivery.traceparent !== undefined) activeTracer()?.delivered(delivery);
}

/** 8 random bytes as 16 hex digits, never all zero (W3C: an invalid parent id). */
export function newSpanId(): string {
  for (;;) {
    const id = randomBytes(8).toString('hex');
    if (id !== '0000000000000000') return id;
  }
}
