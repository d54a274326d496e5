/**
 * The token bucket of a topic's rate limit, as pure arithmetic on (tokens, at): every store
 * keeps these two numbers per limited topic and applies these rules in one atomic step
 * (memory and SQLite here, Redis in flow-admit.lua, PostgreSQL in SQL), so the conformance
 * suite holds every store to the same answers. Tokens taken by admissions not yet bound
 * (`held`) count against the burst: the bucket refills to `burst - held` at most.
 *
 *   rate 10 per 1000 ms, burst 5; a new bucket is full
 *     t = 0:    take 8 -> 5 granted, tokens 0
 *     t = 250:  tokens 2.5 -> take 8: 2 granted, tokens 0.5; the next whole token at 300
 */
import type { TopicLimits } from './limits.js';

export interface BucketState {
  /** Tokens left, fractional: refill adds rate/periodMs a millisecond. */
  readonly tokens: number;
  /** When `tokens` was last brought up to date. */
  readonly at: number;
}

/**
 * The bucket at `now`: refilled since `state.at`, up to `burst` minus the tokens admissions
 * hold (`held`, flow-ledger.ts); a bucket not seen yet is full.
 */
export function refill(state: BucketState | undefined, limits: TopicLimits, now: number, held = 0): BucketState {
  if (limits.rate === null) return { tokens: Infinity, at: now };
  const cap = Math.max(0, limits.burst - held);
  if (state === undefined) return { tokens: cap, at: now };
  const elapsed = Math.max(0, now - state.at);
  return { tokens: Math.min(cap, state.tokens + (elapsed * limits.rate) / limits.periodMs), at: Math.max(now, state.at) };
}

/** When the bucket, left with `tokens` at `at`, holds a whole token again. */
export function nextTokenAt(tokens: number, limits: TopicLimits, at: number): number {
  if (limits.rate === null || tokens >= 1) return at;
  return at + Math.ceil(((1 - tokens) * limits.periodMs) / limits.rate);
}

/** `unused` tokens of an admission given back, never past `burst` minus what other admissions hold. */
export function refund(state: BucketState, limits: TopicLimits, unused: number, now: number, held = 0): BucketState {
  const current = refill(state, limits, now, held);
  return { tokens: Math.min(Math.max(0, limits.burst - held), current.tokens + unused), at: current.at };
}
