/**
 * Standard Webhooks signing (https://www.standardwebhooks.com, spec 1.0.0, symmetric "v1").
 *
 * A secret is `whsec_` + base64 of 24 to 64 random bytes; the HMAC key is the decoded bytes,
 * not the text. Each request carries three headers:
 *
 *   webhook-id:        the message id (delayq: the task id, see webhookIdOf), the same on every attempt
 *   webhook-timestamp: Unix seconds of this attempt
 *   webhook-signature: `v1,<base64 HMAC-SHA256 of "${id}.${timestamp}.${body}">`, one per
 *                      secret, space-separated
 *
 * Example: id `t1`, timestamp 1700000000, body `{"a":1}` and two secrets (after a rotation)
 * give `webhook-signature: v1,K5o... v1,Q2x...`; a receiver that knows either secret finds
 * its own signature among them and accepts.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { DelayQError } from '../core/errors.js';

const PREFIX = 'whsec_';
/** Generated secrets: 256 bits, inside the spec's 192..512. */
const GENERATED_BYTES = 32;
const MIN_BYTES = 24;
const MAX_BYTES = 64;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** Shown of a secret's base64 part when it is displayed again (GET): enough to tell two apart. */
const MASK_VISIBLE = 4;

export interface SignedHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

export interface SignInput {
  readonly id: string;
  readonly timestampSeconds: number;
  readonly body: string;
  /** Current secret first, then old ones still in their grace period; each adds a signature. */
  readonly secrets: readonly string[];
}

export function generateSecret(): string {
  return PREFIX + randomBytes(GENERATED_BYTES).toString('base64');
}

/** The HMAC key of a secret; throws INVALID_ARGUMENT (field `secret`) unless it is `whsec_` + base64 of 24..64 bytes. */
export function parseSecret(text: string): Buffer {
  const invalid = (why: string): DelayQError =>
    new DelayQError('INVALID_ARGUMENT', `secret: ${why}; expected "whsec_" + base64 of ${MIN_BYTES} to ${MAX_BYTES} bytes`, { field: 'secret' });
  if (typeof text !== 'string' || !text.startsWith(PREFIX)) throw invalid('missing the "whsec_" prefix');
  const encoded = text.slice(PREFIX.length);
  if (!BASE64.test(encoded)) throw invalid('not base64');
  const key = Buffer.from(encoded, 'base64');
  // Buffer.from ignores stray bits and bad padding: only canonical base64 round-trips.
  if (key.toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, '')) throw invalid('not canonical base64');
  if (key.length < MIN_BYTES || key.length > MAX_BYTES) throw invalid(`${key.length} bytes`);
  return key;
}

export function isValidSecret(text: string): boolean {
  try {
    parseSecret(text);
    return true;
  } catch {
    return false;
  }
}

/** `whsec_abcd…`: the prefix and the first characters, never enough to sign with. */
export function maskSecret(secret: string): string {
  const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  return `${PREFIX}${encoded.slice(0, MASK_VISIBLE)}…`;
}

/**
 * The webhook-id of a task: its id with each `.` written `%2E`. The spec forbids `.` in a
 * signed id: with one, `a.1700000000` + timestamp + body re-splits into another valid triple.
 * Task ids never hold `%` ([A-Za-z0-9._:-]), so the mapping is one-to-one and stable.
 */
export function webhookIdOf(taskId: string): string {
  return taskId.replaceAll('.', '%2E');
}

export function signedHeaders({ id, timestampSeconds, body, secrets }: SignInput): SignedHeaders {
  if (id.length === 0 || id.includes('.'))
    throw new DelayQError('INVALID_ARGUMENT', `id: a non-empty webhook id without "." (see webhookIdOf; got "${id}")`, { field: 'id' });
  if (secrets.length === 0) throw new DelayQError('INVALID_ARGUMENT', 'secrets: at least one secret signs a push', { field: 'secret' });
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0)
    throw new DelayQError('INVALID_ARGUMENT', `timestampSeconds: a non-negative integer (got ${String(timestampSeconds)})`, { field: 'timestampSeconds' });
  const timestamp = String(timestampSeconds);
  const content = `${id}.${timestamp}.${body}`;
  const signatures = secrets.map((secret) => `v1,${createHmac('sha256', parseSecret(secret)).update(content, 'utf8').digest('base64')}`);
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
}
