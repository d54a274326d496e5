/**
 * The PushTransport (src/core/push.ts) over undici: one `undici.request()` per push through
 * an Agent of its own (keep-alive pools per origin; never the global dispatcher, never the
 * global fetch, whose bundled undici would not take an npm undici Agent).
 *
 * The SSRF guard runs where it cannot be dodged: the Agent's connector checks the address
 * each new socket actually connected to (`socket.remoteAddress`) and destroys the socket
 * before a byte of the request is written when the guard refuses it. A DNS lookup hook
 * alone would not do: undici calls no lookup for IP literals (`127.0.0.1`, `[::ffff:7f00:1]`,
 * `0.0.0.0`), and a hostname may resolve differently at connect time than when checkUrl
 * looked it up (DNS rebinding). Sockets are then reused only for the same origin.
 *
 * Every push holds a slot of a global cap (`maxInFlight`) from before it connects until its
 * body is read; pushes beyond it wait in order. A push that gets no complete answer within
 * its timeoutMs is a failure `timeout after N ms`. `send` never rejects.
 */
import { isIP, type Socket } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import { DelayQError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import { silentLogger } from '../core/logger.js';
import { PUSH_ERROR_BODY_BYTES, type PushRequest, type PushResponse, type PushTransport } from '../core/push.js';
import { checkUrl, createAddressGuard, systemLookupAll, type AddressGuard, type LookupAll } from './address-guard.js';
import { InFlightCap } from './in-flight-cap.js';

export const PUSH_TRANSPORT_DEFAULTS = {
  maxInFlight: 256,
} as const;

/** Read past the first bytes so the connection can be reused; a longer answer closes it instead. */
const DRAIN_BYTES = 64 * 1024;

export interface PushTransportOptions {
  /** CIDRs the SSRF rules let through (`127.0.0.1/32,::1/128`); none by default. */
  readonly allow?: string | readonly string[];
  /** Pushes in flight at once in this process, across every subscription. */
  readonly maxInFlight?: number;
  readonly logger?: Logger;
  /** How checkUrl resolves hostnames (tests inject one); connections always use the system resolver. */
  readonly lookup?: LookupAll;
  /** Wall time in ms, to turn an HTTP-date Retry-After into a delay. */
  readonly now?: () => number;
}

export interface PushTransportStats {
  readonly inFlight: number;
  readonly queued: number;
}

export interface UndiciPushTransport extends PushTransport {
  stats(): PushTransportStats;
}

export class RefusedDestinationError extends Error {
  override readonly name = 'RefusedDestinationError';
}

type Connect = (...args: Parameters<buildConnector.connector>) => Socket | undefined;

const refusalOf = (guard: AddressGuard, socket: Socket): string | null =>
  socket.remoteAddress === undefined ? 'refused destination: no remote address' : guard.refusal(socket.remoteAddress);

/**
 * The backstop: wraps a connector so that a socket whose connected address the guard
 * refuses is destroyed and never handed to undici, whatever resolved or spelled its host.
 */
export function refuseConnected(connect: buildConnector.connector, guard: AddressGuard): buildConnector.connector {
  return (options, callback) => {
    // buildConnector returns the socket (its types say void). Over TLS, the TCP 'connect'
    // comes before the handshake: refusing there sends no ClientHello.
    const socket = (connect as Connect)(options, (error, connected) => {
      if (error !== null) return callback(error, null);
      const refusal = refusalOf(guard, connected);
      if (refusal !== null) {
        connected.destroy();
        return callback(new RefusedDestinationError(refusal), null);
      }
      callback(null, connected);
    });
    socket?.once('connect', () => {
      const refusal = refusalOf(guard, socket);
      if (refusal !== null) socket.destroy(new RefusedDestinationError(refusal));
    });
    return socket;
  };
}

/**
 * undici's connector with the guard applied before any packet leaves: an IP literal host is
 * judged as is, a hostname on each address its lookup answers (the socket's 'lookup' event;
 * destroying there stops the connect); then the connected address again (refuseConnected).
 */
export function guardedConnector(guard: AddressGuard): buildConnector.connector {
  const connect = refuseConnected(buildConnector({}), guard);
  return (options, callback) => {
    const host = options.hostname.startsWith('[') ? options.hostname.slice(1, -1) : options.hostname;
    const literalRefusal = isIP(host) !== 0 ? guard.refusal(host) : null;
    if (literalRefusal !== null) return callback(new RefusedDestinationError(literalRefusal), null);
    const socket = (connect as Connect)(options, callback);
    socket?.on('lookup', (error: Error | null, address: string) => {
      const refusal = error === null && typeof address === 'string' ? guard.refusal(address) : null;
      if (refusal !== null) socket.destroy(new RefusedDestinationError(refusal));
    });
  };
}

/** Retry-After (delta seconds or an HTTP date) as ms from `now`, or null when absent or malformed. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (text === undefined || text === '') return null;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Every HTTP-date form names its month; Date.parse alone would take "-5" for a year.
  if (!/[A-Za-z]{3}/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** The first `limit` bytes of a body as text; the rest read and dropped (up to DRAIN_BYTES), so the socket goes back to the pool. */
async function bodyStart(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<string> {
  const kept: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < limit) kept.push(chunk.subarray(0, limit - size));
    size += chunk.length;
    if (size > DRAIN_BYTES) break; // leaving the loop destroys the body and its connection
  }
  // A multi-byte character cut at the limit becomes U+FFFD, not an exception.
  return new TextDecoder().decode(Buffer.concat(kept));
}

/** A failure's reason from what undici threw: our refusal, a socket error with its code, or undici's message. */
function reasonOf(error: unknown): string {
  if (error instanceof RefusedDestinationError) return error.message;
  const cause = error instanceof Error && error.cause instanceof RefusedDestinationError ? error.cause : null;
  if (cause !== null) return cause.message;
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== undefined && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

/** A URL for logs: its origin and path, never its query (tokens live there). */
function redacted(url: string): string {
  try {
    const { origin, pathname } = new URL(url);
    return origin + pathname;
  } catch {
    return '(not a URL)';
  }
}

export function createPushTransport(options: PushTransportOptions = {}): UndiciPushTransport {
  const guard = createAddressGuard(options.allow ?? []);
  const maxInFlight = options.maxInFlight ?? PUSH_TRANSPORT_DEFAULTS.maxInFlight;
  if (!Number.isSafeInteger(maxInFlight) || maxInFlight < 1)
    throw new DelayQError('INVALID_OPTION', `maxInFlight: a positive integer (got ${String(maxInFlight)})`, { field: 'maxInFlight' });
  const cap = new InFlightCap(maxInFlight);
  const logger = options.logger ?? silentLogger;
  const lookup = options.lookup ?? systemLookupAll;
  const now = options.now ?? Date.now;
  // Per-request timeouts come from each push's AbortSignal, so undici's own are off.
  const agent = new Agent({ connect: guardedConnector(guard), headersTimeout: 0, bodyTimeout: 0 });

  async function exchange(push: PushRequest, signal: AbortSignal): Promise<PushResponse> {
    const typed = Object.keys(push.headers).some((name) => name.toLowerCase() === 'content-type');
    const headers: Record<string, string> = typed ? { ...push.headers } : { 'content-type': 'application/json', ...push.headers };
    const response = await request(push.url, { method: 'POST', headers, body: push.body, dispatcher: agent, signal });
    const start = await bodyStart(response.body, PUSH_ERROR_BODY_BYTES);
    return { kind: 'response', status: response.statusCode, retryAfterMs: parseRetryAfter(response.headers['retry-after'], now()), bodyStart: start };
  }

  return {
    checkUrl: (url) => checkUrl(url, guard, lookup),

    async send(push, signal) {
      const failure = (reason: string): PushResponse => ({ kind: 'failure', reason });
      if (!(Number.isSafeInteger(push.timeoutMs) && push.timeoutMs > 0)) return failure(`timeoutMs: a positive integer (got ${String(push.timeoutMs)})`);
      // Waiting for a slot is not the receiver's time: the timeout starts once the push has one.
      if (!(await cap.acquire(signal))) return failure('aborted');
      // One controller, a timer and a listener: AbortSignal.timeout + AbortSignal.any cost a
      // push several times as much (a profile of a burst showed them at ~7% of its CPU).
      const both = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        both.abort();
      }, push.timeoutMs);
      const onAbort = (): void => both.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) both.abort();
      try {
        return await exchange(push, both.signal);
      } catch (error) {
        if (both.signal.aborted) return failure(timedOut ? `timeout after ${push.timeoutMs} ms` : 'aborted');
        const reason = reasonOf(error);
        logger.debug({ url: redacted(push.url), reason }, 'push failed without a response');
        return failure(reason);
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        cap.release();
      }
    },

    stats: () => ({ inFlight: cap.inFlight, queued: cap.queued }),

    close: () => agent.close(),
  };
}
