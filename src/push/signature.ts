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
import { isValidSecret } from '../core/push-input.js';

const PREFIX = 'whsec_';
/** Generated secrets: 256 bits, inside the spec's 192..512. */
const GENERATED_BYTES = 32;
const MIN_BYTES = 24;
const MAX_BYTES = 64;

export type SignedHeaders = {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
};

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

/** The HMAC key of a secret; throws INVALID_ARGUMENT (field `secret`) unless it is valid (core's isValidSecret). */
export function parseSecret(text: string): Buffer {
  if (!isValidSecret(text))
    throw new DelayQError('INVALID_ARGUMENT', `secret: expected "whsec_" + canonical base64 of ${MIN_BYTES} to ${MAX_BYTES} bytes`, { field: 'secret' });
  return Buffer.from(text.slice(PREFIX.length), 'base64');
}

/**
 * parseSecret, remembered: every push of a subscription signs with the same one or two
 * secrets, and checking and decoding one each time was a visible share of a push's CPU.
 * Bounded: a process sees a handful of secrets; past KEY_CACHE_SIZE the cache starts over.
 */
const keys = new Map<string, Buffer>();
const KEY_CACHE_SIZE = 1_000;

function keyOf(secret: string): Buffer {
  let key = keys.get(secret);
  if (key === undefined) {
    key = parseSecret(secret);
    if (keys.size >= KEY_CACHE_SIZE) keys.clear();
    keys.set(secret, key);
  }
  return key;
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
  const signatures = secrets.map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(content, 'utf8').digest('base64')}`);
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
}
