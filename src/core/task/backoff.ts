import { ENGINE_OPTIONS } from '../option-table/engine.js';
import type { BackoffPolicy } from './model.js';

const B = ENGINE_OPTIONS;
/** The default policy, from the options table (defaults.backoff.*). */
export const DEFAULT_BACKOFF: BackoffPolicy = {
  baseMs: B['defaults.backoff.baseMs'].default,
  factor: B['defaults.backoff.factor'].default,
  maxMs: B['defaults.backoff.maxMs'].default,
  jitter: B['defaults.backoff.jitter'].default,
};

/**
 * Delay before retry number `failedAttempts` (1 after the first failure):
 * min(maxMs, baseMs * factor^(failedAttempts-1)), of which the `jitter` share is drawn
 * uniformly from `random()` in [0, 1). Pure: the caller passes the random source.
 */
export function backoffDelay(policy: BackoffPolicy, failedAttempts: number, random: () => number): number {
  const exponent = Math.max(0, failedAttempts - 1);
  const raw = Math.min(policy.maxMs, policy.baseMs * Math.pow(policy.factor, exponent));
  const fixed = raw * (1 - policy.jitter);
  return Math.round(fixed + raw * policy.jitter * random());
}
