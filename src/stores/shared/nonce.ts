/**
 * Receipt nonces. A receipt is "<attempts>.<nonce><suffix>"; two reservations of one task
 * must never share one, and a released task is reserved again with the same attempt count,
 * so the nonce has to differ per reservation call. One random prefix per process plus a
 * counter does that without a crypto call per reservation (randomBytes per call was ~4% of
 * the main thread's busy time in S3's pattern). The prefix has a fixed length and the base36 counter
 * ends with '-', so callers may append their own suffixes without two nonces colliding.
 */
import { randomBytes } from 'node:crypto';

const PREFIX = randomBytes(6).toString('base64url'); // 8 characters

let counter = 0;

/** A nonce never returned before by this process, and (48 random bits) by any other. */
export function nextNonce(): string {
  counter = counter === Number.MAX_SAFE_INTEGER ? 0 : counter + 1;
  return `${PREFIX}${counter.toString(36)}-`;
}
