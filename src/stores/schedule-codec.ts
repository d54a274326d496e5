/**
 * A recurring schedule as the durable stores keep it: one JSON text per schedule (a SQLite
 * row, a Redis hash field), the id being the key and not repeated inside. The fields are
 * written one by one in a fixed order, so the same record always gives the same text: the
 * stores' swapSchedule compares texts (the text read is the text written, byte for byte).
 * Reading checks every field, as push-subscription-codec.ts does: a text that is not a
 * schedule reads as null and the store skips it with a warning.
 */
import { MISFIRE_POLICIES, type MisfirePolicy, type ScheduleRecord } from '../core/schedule/model.js';

export function encodeSchedule(s: ScheduleRecord): string {
  const stored: Omit<ScheduleRecord, 'id'> = {
    topic: s.topic,
    payload: s.payload,
    cron: s.cron,
    tz: s.tz,
    everyMs: s.everyMs,
    startAt: s.startAt,
    endAt: s.endAt,
    limit: s.limit,
    misfire: s.misfire,
    ttrMs: s.ttrMs,
    maxAttempts: s.maxAttempts,
    backoff: { baseMs: s.backoff.baseMs, factor: s.backoff.factor, maxMs: s.backoff.maxMs, jitter: s.backoff.jitter },
    paused: s.paused,
    nextAt: s.nextAt,
    lastAt: s.lastAt,
    count: s.count,
    rev: s.rev,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
  return JSON.stringify(stored);
}

export function decodeSchedule(id: string, text: string): ScheduleRecord | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(v)) return null;
  const { topic, payload, cron, tz, everyMs, startAt, endAt, limit, misfire, ttrMs, maxAttempts, backoff, paused, nextAt, lastAt, count, rev, createdAt, updatedAt } = v;
  if (typeof topic !== 'string' || typeof payload !== 'string' || typeof tz !== 'string' || typeof paused !== 'boolean') return null;
  if (!(cron === null || typeof cron === 'string') || !MISFIRE_POLICIES.includes(misfire as MisfirePolicy)) return null;
  if (![everyMs, startAt, endAt, limit, nextAt, lastAt].every(isNumberOrNull)) return null;
  if (![ttrMs, maxAttempts, count, rev, createdAt, updatedAt].every(isFiniteNumber)) return null;
  if (!isRecord(backoff) || ![backoff['baseMs'], backoff['factor'], backoff['maxMs'], backoff['jitter']].every(isFiniteNumber)) return null;
  return {
    id,
    topic,
    payload,
    cron: cron,
    tz,
    everyMs: everyMs as number | null,
    startAt: startAt as number | null,
    endAt: endAt as number | null,
    limit: limit as number | null,
    misfire: misfire as MisfirePolicy,
    ttrMs: ttrMs as number,
    maxAttempts: maxAttempts as number,
    backoff: { baseMs: backoff['baseMs'] as number, factor: backoff['factor'] as number, maxMs: backoff['maxMs'] as number, jitter: backoff['jitter'] as number },
    paused,
    nextAt: nextAt as number | null,
    lastAt: lastAt as number | null,
    count: count as number,
    rev: rev as number,
    createdAt: createdAt as number,
    updatedAt: updatedAt as number,
  };
}

/** The port's order for listSchedules: by id, as JavaScript compares strings. */
export function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
function isNumberOrNull(value: unknown): boolean {
  return value === null || isFiniteNumber(value);
}
