/**
 * The client's one way to the server: a JSON request with the client's headers and timeout
 * (`JsonHttp.call`), the server's error envelope turned into a DelayQClientError, and the
 * small pieces every call shares: path segments, queries, paged listings, the answers a
 * missing resource turns into null or false.
 */
import { CLIENT_ERROR_CODES, isWireErrorCode, type WireErrorCode } from '../wire/error-codes.js';
import type { ErrorBody } from '../wire/types.js';
import { DelayQClientError } from './errors.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface CallOptions {
  /** Added to the client's timeout (a reserve's waitMs, a purge). */
  extraTimeoutMs?: number;
  /** Aborting ends the request. */
  signal?: AbortSignal;
}

export interface JsonHttpOptions {
  readonly base: string;
  readonly headers: Record<string, string>;
  readonly timeoutMs: number;
  readonly fetch: typeof fetch;
}

export class JsonHttp {
  /** The server, headers and fetch of every call (client-events.ts streams with them too). */
  constructor(readonly options: JsonHttpOptions) {}

  async call<T>(method: Method, path: string, body?: unknown, options: CallOptions = {}): Promise<T> {
    const { base, headers, fetch } = this.options;
    const timeout = this.options.timeoutMs + (options.extraTimeoutMs ?? 0);
    const timer = AbortSignal.timeout(timeout);
    const signal = options.signal ? AbortSignal.any([timer, options.signal]) : timer;
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        // A POST says JSON even with no body: the server refuses one that does not (cross-site rule, docs/service.md).
        headers: body === undefined && method !== 'POST' ? headers : { ...headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal,
      });
      text = await response.text();
    } catch (error) {
      if (timer.aborted) throw new DelayQClientError('TIMEOUT', `${method} ${path}: no answer within ${timeout} ms`, 0, undefined, { cause: error });
      const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
      throw new DelayQClientError('SERVER_UNREACHABLE', `${method} ${path}: ${base} unreachable (${reason})`, 0, undefined, { cause: error });
    }
    let parsed: unknown;
    try {
      parsed = text.length === 0 ? undefined : JSON.parse(text);
    } catch {
      throw badResponse(method, path, response.status, text);
    }
    if (response.ok) return parsed as T;
    if (isErrorBody(parsed)) {
      const { code, message, details } = parsed.error;
      throw new DelayQClientError(code, message, response.status, details);
    }
    throw badResponse(method, path, response.status, text);
  }
}

/** The call's answer, or `otherwise` when the server answers one of `codes` (a task not found: null, say). */
export async function unless<T, O>(call: Promise<T>, codes: readonly WireErrorCode[], otherwise: O): Promise<T | O> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof DelayQClientError && (codes as readonly string[]).includes(error.code)) return otherwise;
    throw error;
  }
}

/** true once the call answered, false when the server answers one of `codes` (the thing was not there). */
export function doneUnless(call: Promise<unknown>, codes: readonly WireErrorCode[]): Promise<boolean> {
  return unless(
    call.then(() => true),
    codes,
    false,
  );
}

/** Every item of a paged listing: `page(after)` answers one page and the `after` of the next (null on the last). */
export async function everyPage<T>(route: string, page: (after: string | undefined) => Promise<{ items: T[]; next: string | null }>): Promise<T[]> {
  const all: T[] = [];
  let after: string | undefined;
  for (;;) {
    const { items, next } = await page(after);
    all.push(...items);
    if (next === null) return all;
    // A cursor that does not move on would loop for ever: not a delayq answer.
    if (after !== undefined && next <= after) throw new DelayQClientError('BAD_RESPONSE', `${route}: ${CLIENT_ERROR_CODES.BAD_RESPONSE} (next ${next} after ${after})`, 200);
    after = next;
  }
}

/** `path` with the given parameters as its query (those undefined left out). */
export function withQuery(path: string, params: Readonly<Record<string, string | number | undefined>>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, String(value));
  const qs = query.toString();
  return qs ? `${path}?${qs}` : path;
}

/**
 * An object of the answer keyed by names (topics, origins, header names) made to have no
 * prototype: `stats.ready['constructor']` is then undefined for a topic with nothing ready,
 * not Object's constructor, and a topic named `__proto__` reads like any other.
 */
export function withoutPrototype(byName: object | undefined): void {
  if (typeof byName === 'object' && byName !== null && !Array.isArray(byName)) Object.setPrototypeOf(byName, null);
}

/**
 * A path segment. "." and ".." cannot be sent, escaped or not (URL parsing resolves them
 * away, and the request would reach another route): refused here as the server refuses them.
 */
function segment(value: string, code: 'INVALID_ID' | 'INVALID_TOPIC'): string {
  if (value === '.' || value === '..') throw new DelayQClientError(code, `${code === 'INVALID_ID' ? 'id' : 'topic'}: must not be "." or ".."`, 400);
  return encodeURIComponent(value);
}
export const idSegment = (id: string): string => segment(id, 'INVALID_ID');
export const topicSegment = (topic: string): string => segment(topic, 'INVALID_TOPIC');

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null || !('error' in value)) return false;
  const error = value.error;
  return typeof error === 'object' && error !== null && 'code' in error && isWireErrorCode(error.code) && 'message' in error && typeof error.message === 'string';
}

function badResponse(method: Method, path: string, status: number, text: string): DelayQClientError {
  const shown = text.length > 200 ? `${text.slice(0, 200)}...` : text;
  return new DelayQClientError('BAD_RESPONSE', `${method} ${path}: ${CLIENT_ERROR_CODES.BAD_RESPONSE} (status ${status}: ${shown})`, status);
}
