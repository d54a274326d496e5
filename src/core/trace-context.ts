/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) as delayq keeps it with a task:
 * the scheduling call's `traceparent` and `tracestate`, checked and bounded here, stored as
 * one text (`traceparent`, then a space and the `tracestate` when there is one), and
 * handed to the task's deliveries. Pure: the child's new parent id (random bytes) comes
 * from the caller.
 *
 * A bad value is ignored, never refused, as the W3C recommendation asks of a receiver
 * (a proxy may forward a header the caller never wrote; the task matters more than its
 * trace): a malformed `traceparent` drops the trace and its `tracestate`; a malformed or
 * oversized `tracestate` is dropped alone.
 */

/** What a delivery carries: the W3C headers' values. */
export interface TraceHeaders {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** The longest `tracestate` kept (the W3C minimum a vendor must propagate). */
export const MAX_TRACESTATE_LENGTH = 512;
/** The most list members of a `tracestate` (W3C). */
const MAX_TRACESTATE_MEMBERS = 32;
/** Longer than any header worth reading: longer is refused before any parsing. */
const MAX_TRACEPARENT_INPUT = 512;

const TRACEPARENT_00 = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
// W3C: key = simple-key / tenant@system; value: printable ASCII but ',' and '=', no trailing space.
const MEMBER = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * A `traceparent` as version 00 holds it, or null when it is not one. A later version (not
 * `ff`) is read by its version-00 prefix, as the W3C asks, and kept in the 00 form.
 */
export function parseTraceparent(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > MAX_TRACEPARENT_INPUT) return null;
  const text = value.trim();
  const m = TRACEPARENT_00.exec(text);
  if (m === null) return null;
  const [whole, version, traceId, parentId, flags] = m as unknown as [string, string, string, string, string];
  if (version === 'ff' || traceId === ZERO_TRACE || parentId === ZERO_SPAN) return null;
  if (version === '00' ? text.length !== whole.length : text.length > whole.length && text[whole.length] !== '-') return null;
  return `00-${traceId}-${parentId}-${flags}`;
}

/** A `tracestate`, its members trimmed, or null when it is empty, malformed or too long. */
export function parseTracestate(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > MAX_TRACESTATE_LENGTH * 2) return null;
  const members: string[] = [];
  for (const part of value.split(',')) {
    const member = part.trim();
    if (member === '') continue;
    if (!MEMBER.test(member)) return null;
    members.push(member);
  }
  const joined = members.join(',');
  if (members.length === 0 || members.length > MAX_TRACESTATE_MEMBERS || joined.length > MAX_TRACESTATE_LENGTH) return null;
  return joined;
}

/** The stored form of a call's headers, or undefined when its `traceparent` is missing or bad. */
export function traceOf(traceparent: unknown, tracestate: unknown): string | undefined {
  const parent = parseTraceparent(traceparent);
  if (parent === null) return undefined;
  const state = tracestate === undefined ? null : parseTracestate(tracestate);
  return state === null ? parent : `${parent} ${state}`;
}

/**
 * The headers of a stored trace; null for none, or for a stored text that does not read
 * as one (a row is untrusted: a bad one loses its trace, never its task).
 */
export function traceHeaders(stored: unknown): TraceHeaders | null {
  if (typeof stored !== 'string' || stored === '') return null;
  const space = stored.indexOf(' ');
  const traceparent = parseTraceparent(space < 0 ? stored : stored.slice(0, space));
  if (traceparent === null) return null;
  const tracestate = space < 0 ? null : parseTracestate(stored.slice(space + 1));
  return tracestate === null ? { traceparent } : { traceparent, tracestate };
}

/** The trace id of a `traceparent` (checked by parseTraceparent). */
export function traceIdOf(traceparent: string): string {
  return traceparent.slice(3, 35);
}

/**
 * A child of `traceparent` whose span is `spanId` (16 hex digits, not all zero): the same
 * trace id and flags, a new parent id. What a push sends, so the receiver's span hangs
 * under the scheduling call's trace.
 */
export function childTraceparent(traceparent: string, spanId: string): string {
  return `${traceparent.slice(0, 36)}${spanId}${traceparent.slice(52)}`;
}
