/**
 * A topic's flow limits (issue 36, ADR 0043): a token bucket (`rate` deliveries per
 * `periodMs`, holding at most `burst`) and a cap on the deliveries in flight
 * (`concurrency`: reserved, pushed or pulled, and not yet settled). Either may be absent,
 * not both. They hold across every process sharing the store.
 */
import { fail } from '../task/invalid.js';

export interface TopicLimits {
  /** Deliveries per `periodMs`; null: no rate limit. */
  readonly rate: number | null;
  readonly periodMs: number;
  /** The bucket's size: the most deliveries at once after an idle spell. */
  readonly burst: number;
  /** The most deliveries in flight at once; null: no cap. */
  readonly concurrency: number | null;
}

/** The limits of every limited topic, and a token that moves with every change. */
export interface LimitedTopics {
  /** Opaque; equal tokens from one store mean unchanged limits. */
  readonly version: string;
  readonly limits: Readonly<Record<string, TopicLimits>>;
}

export const MAX_FLOW_RATE = 1_000_000;
export const MAX_FLOW_PERIOD_MS = 24 * 3600 * 1000;
export const MAX_FLOW_CONCURRENCY = 100_000;
export const DEFAULT_FLOW_PERIOD_MS = 1_000;

const KEYS = new Set(['rate', 'periodMs', 'burst', 'concurrency']);

function whole(value: unknown, field: string, max: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max)
    fail('INVALID_OPTION', field, `must be a whole number from 1 to ${max}`, value);
  return value;
}

/**
 * Checks limits as a caller gives them (a number out of range: INVALID_OPTION, as every
 * option; a body of the wrong shape or combination: INVALID_ARGUMENT): `rate` with `periodMs` (default 1000) and `burst`
 * (default `rate`), and/or `concurrency`; at least one of `rate` and `concurrency`.
 */
export function validateTopicLimits(input: unknown): TopicLimits {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) fail('INVALID_ARGUMENT', 'limits', 'must be an object', input);
  for (const key of Object.keys(input)) if (!KEYS.has(key)) fail('INVALID_ARGUMENT', key, 'is not a limit (rate, periodMs, burst, concurrency)', key);
  const given = input as Record<string, unknown>;
  const rate = whole(given['rate'], 'rate', MAX_FLOW_RATE);
  const periodMs = whole(given['periodMs'], 'periodMs', MAX_FLOW_PERIOD_MS);
  const burst = whole(given['burst'], 'burst', MAX_FLOW_RATE);
  const concurrency = whole(given['concurrency'], 'concurrency', MAX_FLOW_CONCURRENCY);
  if (rate === undefined && concurrency === undefined) fail('INVALID_ARGUMENT', 'limits', 'need a rate or a concurrency', input);
  if (rate === undefined && (periodMs !== undefined || burst !== undefined)) fail('INVALID_ARGUMENT', 'rate', 'is needed with periodMs or burst', input);
  return {
    rate: rate ?? null,
    periodMs: periodMs ?? DEFAULT_FLOW_PERIOD_MS,
    burst: burst ?? rate ?? 1,
    concurrency: concurrency ?? null,
  };
}

/** The limits as stored: a compact JSON text every store keeps as it is. */
export function encodeTopicLimits(limits: TopicLimits): string {
  return JSON.stringify([limits.rate, limits.periodMs, limits.burst, limits.concurrency]);
}

export function decodeTopicLimits(text: string): TopicLimits {
  const [rate, periodMs, burst, concurrency] = JSON.parse(text) as [number | null, number, number, number | null];
  return { rate, periodMs, burst, concurrency };
}
