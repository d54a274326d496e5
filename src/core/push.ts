/**
 * Push delivery (the seeds' "callback"): while a topic has a push subscription, each of its
 * due tasks is POSTed to the subscription's URL instead of waiting for a pull consumer. A
 * push is a reservation like any other: a 2xx response acks it; anything else (timeouts,
 * connection errors, refused destinations, non-2xx statuses) is a failed attempt, retried
 * with the task's backoff (or after the receiver's Retry-After, capped) until maxAttempts,
 * then dead. The request follows the Standard Webhooks spec (docs/push.md).
 *
 * Pure types and rules only; the HTTP transport, the signing and the SSRF guard live in
 * src/push, behind the PushTransport port.
 */

/** A signing secret in the Standard Webhooks format: `whsec_` + base64 of 24 to 64 random bytes. */
export interface PushSecret {
  readonly secret: string;
  /**
   * Null for the current secret. An old secret, after a rotation, keeps signing (a second
   * signature in the same header) until this time, so receivers can switch at leisure.
   */
  readonly expiresAt: number | null;
}

/** A topic's push subscription, as stored. */
export interface PushSubscription {
  readonly topic: string;
  /** http or https only; checked against the SSRF rules when set and at each connection. */
  readonly url: string;
  /** The current secret first, then old ones still in their grace period. */
  readonly secrets: readonly PushSecret[];
  /** A push with no complete response within this long is a failed attempt. */
  readonly timeoutMs: number;
  /** Pushes of this topic in flight at once, per process. */
  readonly concurrency: number;
  /** Extra request headers (never the Standard Webhooks or delayq-* ones). */
  readonly headers: Readonly<Record<string, string>>;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export const PUSH_DEFAULTS = {
  timeoutMs: 10_000,
  concurrency: 16,
} as const;

/** Pushes of tasks with their own url in flight at once, per process (their one consumer). */
export const PUSH_LANE_CONCURRENCY = 64;

/** How long an old secret keeps signing after a new one is set: receivers have a day to switch. */
export const SECRET_ROTATION_GRACE_MS = 24 * 3600 * 1000;

/** The most of a receiver's answer kept in the task's lastError. */
export const PUSH_ERROR_BODY_BYTES = 200;

/** The longest Retry-After honoured: a receiver cannot park a task for longer than this. */
export const MAX_RETRY_AFTER_MS = 3600 * 1000;

/** One HTTP request of a push, signed and ready to send. */
export interface PushRequest {
  readonly url: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The answer's time, from when the request is sent. */
  readonly timeoutMs: number;
}

/** What came back: a response (any status), or no response at all. */
export type PushResponse =
  | {
      readonly kind: 'response';
      readonly status: number;
      /** The Retry-After header as a delay in ms from now, when present and valid. */
      readonly retryAfterMs: number | null;
      /** The first PUSH_ERROR_BODY_BYTES of the body, as text. */
      readonly bodyStart: string;
    }
  | {
      readonly kind: 'failure';
      /** Why: "timeout after 10000 ms", "connect ECONNREFUSED", "refused destination 10.0.0.1: private"... */
      readonly reason: string;
    };

/** The HTTP side of push delivery (src/push implements it over undici). */
export interface PushTransport {
  /**
   * Rejects a URL that may never be pushed to (not http/https, or a literal or resolved
   * address the SSRF rules refuse) with DelayQError INVALID_URL and the reason.
   */
  checkUrl(url: string): Promise<void>;
  /** Sends one request; never rejects (failures are a PushResponse of kind 'failure'). */
  send(request: PushRequest, signal?: AbortSignal): Promise<PushResponse>;
  /**
   * Pushes to `url` are coming: get ready now (load the HTTP client, resolve the host), so
   * the first is as punctual as the rest. Best effort, in the background; never throws.
   */
  warm?(url: string): void;
  close(): Promise<void>;
}

/** The settlement a push's response calls for. */
export type PushVerdict = { readonly ack: true } | { readonly ack: false; readonly error: string; readonly retryAfterMs: number | null };

/**
 * 2xx acks. Everything else is a failed attempt (the task's backoff, maxAttempts, then
 * dead); 429 and 5xx honour Retry-After, capped at MAX_RETRY_AFTER_MS. Other 4xx are
 * failed attempts too, not dead at once: a receiver deployed with a bug answers 400 or 404
 * for a while, and the retries outlive it. Redirects are not followed (3xx fails).
 */
export function judgePush(response: PushResponse): PushVerdict {
  if (response.kind === 'failure') return { ack: false, error: response.reason, retryAfterMs: null };
  if (response.status >= 200 && response.status < 300) return { ack: true };
  const honoursRetryAfter = response.status === 429 || response.status >= 500;
  const retryAfterMs = honoursRetryAfter && response.retryAfterMs !== null ? Math.min(Math.max(0, response.retryAfterMs), MAX_RETRY_AFTER_MS) : null;
  const body = response.bodyStart.length > 0 ? `: ${response.bodyStart}` : '';
  return { ack: false, error: `HTTP ${response.status}${body}`, retryAfterMs };
}

/**
 * How a push ended, for the counters in stats: `ok` (2xx), or why not. `aborted`: given up
 * before it reached the receiver (the queue closed); `unsigned`: no secret to sign with.
 */
export type PushResultClass = 'ok' | 'timeout' | 'connection' | 'refused' | 'aborted' | 'http5xx' | 'http429' | 'http4xx' | 'http3xx' | 'unsigned';

export function classifyPush(response: PushResponse): PushResultClass {
  if (response.kind === 'failure') {
    const { reason } = response;
    if (reason.startsWith('timeout')) return 'timeout';
    if (reason.startsWith('refused destination')) return 'refused';
    if (reason === 'aborted') return 'aborted';
    return 'connection';
  }
  const s = response.status;
  if (s >= 200 && s < 300) return 'ok';
  if (s === 429) return 'http429';
  if (s >= 500) return 'http5xx';
  if (s >= 400) return 'http4xx';
  return 'http3xx';
}

/**
 * What a push's result says about its origin (core/push-breaker.ts): connection errors,
 * timeouts and 5xx are failures; any other answer shows the origin up (a 429 is handled by
 * its Retry-After, a 4xx is the request's fault); a push that never reached it says nothing.
 */
export function breakerOutcome(result: PushResultClass): 'success' | 'failure' | 'neutral' {
  switch (result) {
    case 'timeout':
    case 'connection':
    case 'http5xx':
      return 'failure';
    case 'refused':
    case 'aborted':
    case 'unsigned':
      return 'neutral';
    default:
      return 'success';
  }
}

/** What the signer is given for one request (Standard Webhooks: the signed string is `id.timestamp.body`). */
export interface PushSignInput {
  /** The `webhook-id`: the task id, the same on every attempt, so receivers can deduplicate. */
  readonly id: string;
  /** The `webhook-timestamp`: this attempt's time, in whole seconds since the epoch. */
  readonly timestampSeconds: number;
  readonly body: string;
  /** The secrets that sign now: the current one first, then old ones in their grace period. */
  readonly secrets: readonly string[];
}

/**
 * The signing side of push delivery (src/push implements it over node:crypto, so the engine
 * stays free of it).
 */
export interface PushSigner {
  /** The headers `webhook-id`, `webhook-timestamp` and `webhook-signature` (one `v1,<sig>` per secret, space-separated). */
  sign(input: PushSignInput): Readonly<Record<string, string>>;
  /** A new random secret in the `whsec_` format (32 bytes). */
  generateSecret(): string;
}

/** The ports push delivery needs: both or neither (no transport, no pushing). */
export interface PushPorts {
  readonly transport: PushTransport;
  readonly signer: PushSigner;
}

/**
 * A push reservation lasts the subscription's timeoutMs plus this: the request has given
 * up before the reservation runs out, so a task is never pushed again while its push is
 * still in flight; a push cut short by a crash is redelivered this long after it started.
 */
export const PUSH_RESERVATION_MARGIN_MS = 5_000;
