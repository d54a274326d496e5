/**
 * The PushTransport (src/core/push.ts) over undici: one `agent.dispatch()` per push through
 * an Agent of its own (keep-alive pools per origin; never the global dispatcher, never the
 * global fetch, whose bundled undici would not take an npm undici Agent). The dispatch API
 * with a small handler (Exchange), not `undici.request()`: a push needs the status,
 * Retry-After and the first bytes of the answer, and request()'s response stream, async
 * resource and abort signal were a visible share of a push's CPU in a profile (ADR 0029).
 *
 * The SSRF guard runs where it cannot be dodged: the Agent's connector checks the address
 * each new socket actually connected to (`socket.remoteAddress`) and destroys the socket
 * before a byte of the request is written when the guard refuses it. A DNS lookup hook
 * alone would not do: undici calls no lookup for IP literals (`127.0.0.1`, `[::ffff:7f00:1]`,
 * `0.0.0.0`), and a hostname may resolve differently at connect time than when checkUrl
 * looked it up (DNS rebinding). Sockets are then reused only for the same origin.
 *
 * The transport sends each push at once: how many are in flight is the engine's to bound
 * (engine/push/push-slots.ts shares `maxInFlight` fairly between the pushed topics). A push
 * that gets no complete answer within its timeoutMs is a failure `timeout after N ms`.
 * `send` never rejects.
 */
import { redactUrl } from '../core/redact.js';
import { isIP, type Socket } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import type { Logger } from '../core/ports/index.js';
import { silentLogger } from '../core/logger.js';
import { PUSH_ERROR_BODY_BYTES, type PushRequest, type PushResponse, type PushTransport } from '../core/push.js';
import { checkUrl, createAddressGuard, portOf, systemLookupAll, type AddressGuard, type LookupAll } from './address-guard.js';

/** Read past the first bytes so the connection can be reused; a longer answer closes it instead. */
const DRAIN_BYTES = 64 * 1024;

export interface PushTransportOptions {
  /** What the SSRF rules let through (allow-list.ts: `127.0.0.1:8080,[::1]:9000`); nothing by default. */
  readonly allow?: string | readonly string[];
  readonly logger?: Logger;
  /** How checkUrl resolves hostnames (tests inject one); connections always use the system resolver. */
  readonly lookup?: LookupAll;
  /** Wall time in ms, to turn an HTTP-date Retry-After into a delay. */
  readonly now?: () => number;
}

export interface PushTransportStats {
  /** Pushes undici is not done with yet. */
  readonly inFlight: number;
}

export interface UndiciPushTransport extends PushTransport {
  stats(): PushTransportStats;
}

export class RefusedDestinationError extends Error {
  override readonly name = 'RefusedDestinationError';
}

type Connect = (...args: Parameters<buildConnector.connector>) => Socket | undefined;

const refusalOf = (guard: AddressGuard, socket: Socket): string | null =>
  socket.remoteAddress === undefined || socket.remotePort === undefined ? 'refused destination: no remote address' : guard.refusal(socket.remoteAddress, socket.remotePort);

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
    const port = portOf(options.protocol, options.port);
    const literalRefusal = isIP(host) !== 0 ? guard.refusal(host, port) : null;
    if (literalRefusal !== null) return callback(new RefusedDestinationError(literalRefusal), null);
    const socket = (connect as Connect)(options, callback);
    socket?.on('lookup', (error: Error | null, address: string) => {
      const refusal = error === null && typeof address === 'string' ? guard.refusal(address, port) : null;
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

interface Target {
  readonly origin: string;
  /** Path and query. */
  readonly path: string;
}

const failure = (reason: string): PushResponse => ({ kind: 'failure', reason });

/**
 * One push through undici's dispatch API: the status, Retry-After and the first bytes of
 * the answer, read as they come (no response stream), under one timer. It settles at the
 * first of: the complete answer, an error, its timeout, the caller's signal; `done` runs
 * once undici is finished with the request.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  /** Set once the push has its outcome; later callbacks only finish undici's side. */
  private settled = false;
  /** Why the push was given up before undici started it: it is aborted as it starts. */
  private abortReason: Error | null = null;
  private status = 0;
  private retryAfter: string | string[] | undefined = undefined;
  private kept: Buffer[] = [];
  private size = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort: (() => void) | null = null;
  readonly promise: Promise<PushResponse>;
  private resolve!: (response: PushResponse) => void;

  constructor(
    private readonly timeoutMs: number,
    private readonly signal: AbortSignal | undefined,
    private readonly now: () => number,
    private readonly logger: Logger,
    private readonly url: string,
    private readonly done: () => void,
  ) {
    this.promise = new Promise<PushResponse>((resolve) => (this.resolve = resolve));
    this.timer = setTimeout(this.onTimeout, timeoutMs);
    if (signal !== undefined) {
      this.onAbort = (): void => this.giveUp('aborted');
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  private readonly onTimeout = (): void => this.giveUp(`timeout after ${this.timeoutMs} ms`);

  private giveUp(reason: string): void {
    if (this.settled) return;
    this.settle(failure(reason));
    const error = new Error(reason);
    if (this.controller === null) this.abortReason = error;
    else this.controller.abort(error);
  }

  private settle(response: PushResponse): void {
    this.settled = true;
    clearTimeout(this.timer);
    if (this.onAbort !== null) this.signal?.removeEventListener('abort', this.onAbort);
    this.resolve(response);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortReason !== null) controller.abort(this.abortReason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200) return; // 1xx: the answer is still to come
    this.status = statusCode;
    this.retryAfter = headers['retry-after'];
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    if (this.size < PUSH_ERROR_BODY_BYTES) this.kept.push(chunk.subarray(0, PUSH_ERROR_BODY_BYTES - this.size));
    this.size += chunk.length;
    // Read past the first bytes so the connection can be reused; a longer answer closes it instead.
    if (this.size > DRAIN_BYTES) {
      this.answer();
      controller.abort(new Error('answer too long: connection closed'));
    }
  }

  onResponseEnd(): void {
    if (!this.settled) this.answer();
    this.done();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (!this.settled) {
      const reason = reasonOf(error);
      this.logger.debug({ url: redactUrl(this.url), reason }, 'push failed without a response');
      this.settle(failure(reason));
    }
    this.done();
  }

  private answer(): void {
    // A multi-byte character cut at the limit becomes U+FFFD, not an exception.
    const bodyStart = this.size === 0 ? '' : new TextDecoder().decode(this.kept.length === 1 ? this.kept[0] : Buffer.concat(this.kept));
    this.kept = [];
    this.settle({ kind: 'response', status: this.status, retryAfterMs: parseRetryAfter(this.retryAfter, this.now()), bodyStart });
  }
}

/** Whether the headers name a Content-Type, in any case. */
function hasContentType(headers: Readonly<Record<string, string>>): boolean {
  if ('content-type' in headers) return true;
  for (const name in headers) if (name.toLowerCase() === 'content-type') return true;
  return false;
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

export function createPushTransport(options: PushTransportOptions = {}): UndiciPushTransport {
  const guard = createAddressGuard(options.allow ?? []);
  const logger = options.logger ?? silentLogger;
  const lookup = options.lookup ?? systemLookupAll;
  const now = options.now ?? Date.now;
  // Each push's Exchange times it, so undici's own timeouts are off.
  const agent = new Agent({ connect: guardedConnector(guard), headersTimeout: 0, bodyTimeout: 0 });
  let inFlight = 0;
  const release = (): void => void inFlight--;

  function start(push: PushRequest, signal: AbortSignal | undefined): Promise<PushResponse> {
    inFlight++;
    const exchange = new Exchange(push.timeoutMs, signal, now, logger, push.url, release);
    try {
      const { origin, path } = targetOf(push.url);
      const headers = hasContentType(push.headers) ? push.headers : { 'content-type': 'application/json', ...push.headers };
      // undici reports a failure to dispatch through the handler (onResponseError).
      agent.dispatch({ origin, path, method: 'POST', headers, body: push.body }, exchange);
    } catch (error) {
      // A url that does not parse: undici never saw the push.
      exchange.onResponseError(undefined, error instanceof Error ? error : new Error(String(error)));
    }
    return exchange.promise;
  }

  /** Each url's origin and path, parsed once: a subscription pushes one url many times. */
  const targets = new Map<string, Target>();
  const targetOf = (url: string): Target => {
    let target = targets.get(url);
    if (target === undefined) {
      const parsed = new URL(url);
      target = { origin: parsed.origin, path: parsed.pathname + parsed.search };
      // Bounded: per-task urls may all differ (a url is cheap to parse again).
      if (targets.size >= 10_000) targets.clear();
      targets.set(url, target);
    }
    return target;
  };

  return {
    checkUrl: (url) => checkUrl(url, guard, lookup),

    send(push, signal) {
      if (!(Number.isSafeInteger(push.timeoutMs) && push.timeoutMs > 0)) return Promise.resolve(failure(`timeoutMs: a positive integer (got ${String(push.timeoutMs)})`));
      if (signal?.aborted === true) return Promise.resolve(failure('aborted'));
      return start(push, signal);
    },
    stats: () => ({ inFlight }),

    // The url parsed and its host resolved ahead (the resolver's first call is the slow one);
    // no connection is opened: only a push may reach the receiver.
    warm(url) {
      try {
        const { origin } = targetOf(url);
        const host = new URL(origin).hostname.replace(/^\[|\]$/g, '');
        if (isIP(host) === 0) lookup(host).catch(() => undefined);
      } catch {
        // A url that does not parse: its push will say so.
      }
    },

    close: () => agent.close(),
  };
}
