/**
 * A recurring schedule as the durable stores keep it: one JSON text per schedule (a SQLite
 * row, a Redis hash field), the id being the key and not repeated inside. The text is an
 * array, not an object: field names would be most of it (a schedule's text is ~150 bytes
 * instead of ~420, and a Redis namespace holds one per schedule), and the fixed order makes
 * the same record always give the same text, which the stores' swapSchedules compares.
 *
 *   [1, topic, payload, cron, tz, everyMs, startAt, endAt, limit, misfire, ttrMs,
 *    maxAttempts, baseMs, factor, maxMs, jitter, paused (0|1), nextAt, lastAt, count, rev,
 *    createdAt, updatedAt(, url)]
 *
 * The push `url` is a 24th element only when the schedule has one, or a priority: a schedule without
 * pays no byte for it, and texts written before urls read as url null. The priority of its
 * occurrences is a 25th only when it is not 0 (ADR 0057); texts without it read as 0.
 * The leading 1 is the layout's version. Reading checks every field, as
 * push-subscription-codec.ts does: a text that is not a schedule reads as null and the
 * store skips it with a warning.
 */
import { priorityOf } from './shared/task-rows.js';
import { MISFIRE_POLICIES, type MisfirePolicy, type RecurringScheduleRecord } from '../core/schedule/model.js';

const LAYOUT = 1;
const FIELDS = 23;

export function encodeSchedule(s: RecurringScheduleRecord): string {
  return JSON.stringify([
    LAYOUT,
    s.topic,
    s.payload,
    s.cron,
    s.tz,
    s.everyMs,
    s.startAt,
    s.endAt,
    s.limit,
    s.misfire,
    s.ttrMs,
    s.maxAttempts,
    s.backoff.baseMs,
    s.backoff.factor,
    s.backoff.maxMs,
    s.backoff.jitter,
    s.paused ? 1 : 0,
    s.nextAt,
    s.lastAt,
    s.count,
    s.rev,
    s.createdAt,
    s.updatedAt,
    ...(s.priority !== 0 ? [s.url, s.priority] : s.url === null ? [] : [s.url]),
  ]);
}

export function decodeSchedule(id: string, text: string): RecurringScheduleRecord | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(v) || v.length < FIELDS || v[0] !== LAYOUT) return null;
  const [, topic, payload, cron, tz, everyMs, startAt, endAt, limit, misfire, ttrMs, maxAttempts, baseMs, factor, maxMs, jitter, paused, nextAt, lastAt, count, rev, createdAt, updatedAt, url = null, priority = 0] =
    v as unknown[];
  if (!(url === null || (typeof url === 'string' && url !== ''))) return null;
  if (typeof priority !== 'number' || priorityOf(priority) !== priority) return null;
  if (typeof topic !== 'string' || typeof payload !== 'string' || typeof tz !== 'string' || (paused !== 0 && paused !== 1)) return null;
  if (!(cron === null || typeof cron === 'string') || !MISFIRE_POLICIES.includes(misfire as MisfirePolicy)) return null;
  if (![everyMs, startAt, endAt, limit, nextAt, lastAt].every(isNumberOrNull)) return null;
  if (![ttrMs, maxAttempts, baseMs, factor, maxMs, jitter, count, rev, createdAt, updatedAt].every(isFiniteNumber)) return null;
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
    backoff: { baseMs: baseMs as number, factor: factor as number, maxMs: maxMs as number, jitter: jitter as number },
    paused: paused === 1,
    nextAt: nextAt as number | null,
    lastAt: lastAt as number | null,
    count: count as number,
    rev: rev as number,
    createdAt: createdAt as number,
    updatedAt: updatedAt as number,
    url,
    priority,
  };
}

/** The port's order for listSchedules: by id, as JavaScript compares strings. */
export function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
function isNumberOrNull(value: unknown): boolean {
  return value === null || isFiniteNumber(value);
}
