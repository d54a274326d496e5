/**
 * The rules of a push subscription's settings (what `setPush` and `PUT /v1/topics/:topic/push`
 * accept) and of its secrets: their format, their masked form, and what a rotation keeps.
 * Pure: the URL's SSRF check (it resolves names) and the generation of secrets (it needs
 * randomness) are the transport's and the signer's, behind their ports.
 */
import { asDict, dict } from './dict.js';
import { storableText } from './text.js';
import { DelayQError, type ErrorCode } from './errors.js';
import { PUSH_DEFAULTS, SECRET_ROTATION_GRACE_MS, type PushSecret, type PushSubscription } from './push.js';

/** What a caller gives to create or replace a topic's subscription. */
export interface PushInput {
  /** http or https; checked against the SSRF rules before it is stored. */
  url: string;
  /** `whsec_` + base64 of 24 to 64 bytes. Omitted: the current one is kept, or one is generated. */
  secret?: string;
  /** Default 10 s, from 1 ms to MAX_PUSH_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Default 16, from 1 to MAX_PUSH_CONCURRENCY. */
  concurrency?: number;
  /** Extra request headers: string values, none of the names delayq sets itself. */
  headers?: Record<string, string>;
}

/** A push input, checked and defaulted (the secret still optional). */
export interface CheckedPushInput {
  readonly url: string;
  readonly secret: string | undefined;
  readonly timeoutMs: number;
  readonly concurrency: number;
  readonly headers: Readonly<Record<string, string>>;
}

export const MAX_PUSH_TIMEOUT_MS = 60_000;
export const MAX_PUSH_CONCURRENCY = 1_000;
export const MAX_PUSH_URL_LENGTH = 2_048;
export const MAX_PUSH_HEADERS = 32;
/** Names plus values, over all extra headers. */
export const MAX_PUSH_HEADER_BYTES = 8_192;

const INPUT_KEYS = new Set(['url', 'secret', 'timeoutMs', 'concurrency', 'headers']);
// RFC 9110 token characters.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Visible ASCII, spaces and tabs: no CR or LF (header injection), nothing the wire would mangle.
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;
const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'host', 'transfer-encoding', 'connection']);
const RESERVED_PREFIXES = ['webhook-', 'delayq-'];
const SECRET_PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function fail(code: ErrorCode, field: string, problem: string): never {
  throw new DelayQError(code, `${field}: ${problem}`, { field });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks a push input and fills the defaults; throws INVALID_URL, INVALID_SECRET or INVALID_OPTION. */
export function validatePushInput(input: unknown): CheckedPushInput {
  if (!isPlainObject(input)) fail('INVALID_ARGUMENT', 'push', 'must be an object with a url');
  for (const key of Object.keys(input)) if (!INPUT_KEYS.has(key)) fail('INVALID_ARGUMENT', `push.${key}`, 'unknown field');
  const secret = input['secret'];
  if (secret !== undefined && !isValidSecret(secret)) fail('INVALID_SECRET', 'secret', `must be ${SECRET_PREFIX} followed by the base64 of 24 to 64 bytes`);
  return {
    url: validatePushUrl(input['url']),
    secret,
    timeoutMs: intIn(input['timeoutMs'], 'timeoutMs', 1, MAX_PUSH_TIMEOUT_MS, PUSH_DEFAULTS.timeoutMs),
    concurrency: intIn(input['concurrency'], 'concurrency', 1, MAX_PUSH_CONCURRENCY, PUSH_DEFAULTS.concurrency),
    headers: validatePushHeaders(input['headers']),
  };
}

/** The URL's syntax only: the transport's checkUrl then applies the SSRF rules. */
export function validatePushUrl(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) fail('INVALID_URL', 'url', 'must be a non-empty string');
  if (value.length > MAX_PUSH_URL_LENGTH) fail('INVALID_URL', 'url', `must be at most ${MAX_PUSH_URL_LENGTH} characters`);
  // The URL is kept as given: text a store could not hold (NUL, a lone surrogate) and other
  // controls are refused here, not percent-encoded behind the caller's back.
  // eslint-disable-next-line no-control-regex -- the controls are what is refused
  if (storableText(value, MAX_PUSH_URL_LENGTH) !== value || /[\u0000-\u001f\u007f]/.test(value)) fail('INVALID_URL', 'url', 'must not contain control characters or lone surrogates (percent-encode them)');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail('INVALID_URL', 'url', 'is not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail('INVALID_URL', 'url', `must be http or https (got ${url.protocol.slice(0, -1)})`);
  // Credentials in a URL end up in logs and GET answers; a header is the place for them.
  if (url.username !== '' || url.password !== '') fail('INVALID_URL', 'url', 'must not carry credentials (use headers)');
  return value;
}

function validatePushHeaders(value: unknown): Readonly<Record<string, string>> {
  if (value === undefined) return {};
  if (!isPlainObject(value)) fail('INVALID_OPTION', 'headers', 'must be an object of string values');
  const entries = Object.entries(value);
  if (entries.length > MAX_PUSH_HEADERS) fail('INVALID_OPTION', 'headers', `at most ${MAX_PUSH_HEADERS} headers`);
  const headers = dict<string>();
  let bytes = 0;
  for (const [name, headerValue] of entries) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) fail('INVALID_OPTION', `headers.${name}`, 'is not a valid header name');
    if (RESERVED_HEADERS.has(lower) || RESERVED_PREFIXES.some((prefix) => lower.startsWith(prefix)))
      fail('INVALID_OPTION', `headers.${name}`, 'is set by delayq (content-type, content-length, host, webhook-*, delayq-*)');
    if (typeof headerValue !== 'string' || !HEADER_VALUE.test(headerValue)) fail('INVALID_OPTION', `headers.${name}`, 'must be a string of printable ASCII');
    if (headers[lower] !== undefined) fail('INVALID_OPTION', `headers.${name}`, 'is given twice');
    bytes += lower.length + headerValue.length;
    headers[lower] = headerValue;
  }
  if (bytes > MAX_PUSH_HEADER_BYTES) fail('INVALID_OPTION', 'headers', `at most ${MAX_PUSH_HEADER_BYTES} bytes of names and values`);
  return headers;
}

function intIn(value: unknown, field: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) fail('INVALID_OPTION', field, `must be an integer from ${min} to ${max}`);
  return value;
}

/** `whsec_` + canonical base64 of 24 to 64 bytes (Standard Webhooks). */
export function isValidSecret(value: unknown): value is string {
  if (typeof value !== 'string' || !value.startsWith(SECRET_PREFIX)) return false;
  const encoded = value.slice(SECRET_PREFIX.length);
  if (encoded.length % 4 !== 0 || !BASE64.test(encoded)) return false;
  const padding = encoded.endsWith('==') ? 2 : encoded.endsWith('=') ? 1 : 0;
  // Canonical only: the bits a padded last character carries past the data are zero, so
  // the text is the one encoding of its bytes (a decoder would silently drop them).
  const last = BASE64_DIGITS.indexOf(encoded[encoded.length - 1 - padding]!);
  if ((padding === 2 && (last & 0b1111) !== 0) || (padding === 1 && (last & 0b11) !== 0)) return false;
  const bytes = (encoded.length / 4) * 3 - padding;
  return bytes >= 24 && bytes <= 64;
}

const BASE64_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** A secret as GET shows it: the prefix and the first 4 characters of its base64 part. */
export function maskSecret(secret: string): string {
  return `${secret.slice(0, SECRET_PREFIX.length + 4)}…`;
}

/** The secrets that sign at `now`: the current one and old ones still in their grace period. */
export function activeSecrets(secrets: readonly PushSecret[], now: number): string[] {
  const active: string[] = [];
  for (const { secret, expiresAt } of secrets) if (expiresAt === null || expiresAt > now) active.push(secret);
  return active;
}

/**
 * The secrets after setting `next` as the current one at `now`: the same current secret
 * (or none given) keeps the list; a new one demotes the current secret to sign on for
 * SECRET_ROTATION_GRACE_MS. Expired old secrets are dropped either way.
 */
export function rotateSecrets(previous: readonly PushSecret[], next: string, now: number): PushSecret[] {
  const live = previous.filter((s) => s.expiresAt !== null && s.expiresAt > now && s.secret !== next);
  const current = previous.find((s) => s.expiresAt === null);
  if (current === undefined || current.secret === next) return [{ secret: next, expiresAt: null }, ...live];
  return [{ secret: next, expiresAt: null }, { secret: current.secret, expiresAt: now + SECRET_ROTATION_GRACE_MS }, ...live];
}

/** A subscription as it is shown: every secret masked, its headers without a prototype (header names are the caller's). */
export function maskSubscription(subscription: PushSubscription): PushSubscription {
  return { ...subscription, secrets: subscription.secrets.map((s) => ({ secret: maskSecret(s.secret), expiresAt: s.expiresAt })), headers: asDict(subscription.headers) };
}
