/**
 * Recurring schedules (docs/cron.md): a rule (a cron pattern in a time zone, or a fixed
 * interval) that makes ordinary tasks, one per occurrence. An occurrence's task id is
 * derived from the schedule and the occurrence time (`occurrenceId`), so creating it twice
 * (two processes, a restart between creating it and recording so) makes one task.
 */
import type { BackoffPolicy } from '../task/model.js';

export const MISFIRE_POLICIES = ['skip', 'once', 'all'] as const;
/**
 * What happens to occurrences missed while no delayq process ran: `skip` them, fire the
 * latest one `once` (the default), or fire `all` of them in order (at most MAX_CATCH_UP,
 * the latest ones).
 */
export type MisfirePolicy = (typeof MISFIRE_POLICIES)[number];
export const DEFAULT_MISFIRE: MisfirePolicy = 'once';

/** The shortest `everyMs`: the engine plans occurrences, it is not a busy loop. */
export const MIN_EVERY_MS = 1_000;
/** The most missed occurrences `misfire: 'all'` creates after one downtime. */
export const MAX_CATCH_UP = 1_000;
/** A schedule id is at most this long, so that id + ':' + a 13-to-16-digit time fits a task id (256). */
export const MAX_SCHEDULE_ID_LENGTH = 200;
/**
 * The longest cron pattern: the longest useful one (every field a list of names) is about
 * 150 characters, while the parser's time grows with the text (a 28 MB pattern held the
 * server 13 s), so the length is checked before the pattern is parsed.
 */
export const MAX_CRON_LENGTH = 256;
/** The longest time zone name (IANA names are at most about 32 characters). */
export const MAX_TZ_LENGTH = 64;
/** Schedules in one page of a listing (GET /v1/schedules), by default and at most. */
export const DEFAULT_SCHEDULE_PAGE = 100;
export const MAX_SCHEDULE_PAGE = 1_000;
/**
 * A page of schedules ends after the schedule whose payload takes the page's payloads past
 * this many characters (JSON text), whatever its `limit`: a thousand schedules with 1 MiB
 * payloads would otherwise be a 1 GiB answer. A page always holds at least one schedule.
 */
export const SCHEDULE_PAGE_PAYLOAD_BUDGET = 4 * 1024 * 1024;

/** What a caller defines; `upsert` of the same definition changes nothing. */
export interface RecurringScheduleDefinition {
  readonly id: string;
  readonly topic: string;
  /** The payload as JSON text, as tasks keep it. */
  readonly payload: string;
  /** A cron pattern (5 fields, or 6 with seconds), or null for an interval schedule. */
  readonly cron: string | null;
  /** The IANA time zone the cron pattern is read in ('UTC' for interval schedules). */
  readonly tz: string;
  /** The interval in ms, or null for a cron schedule. */
  readonly everyMs: number | null;
  /** No occurrence before this instant; for an interval, the first occurrence (default: multiples of everyMs since the epoch). */
  readonly startAt: number | null;
  /** No occurrence at or after this instant. */
  readonly endAt: number | null;
  /** At most this many occurrences in the schedule's life. */
  readonly limit: number | null;
  readonly misfire: MisfirePolicy;
  readonly ttrMs: number;
  readonly maxAttempts: number;
  readonly backoff: BackoffPolicy;
  /**
   * The push target of every occurrence (a task's own `url`, docs/push.md), or null: then
   * occurrences go to their topic's consumers or push subscription.
   */
  readonly url: string | null;
  /** The priority of every occurrence (a task's `priority`, ADR 0057); 0 by default. */
  readonly priority: number;
}

/** Where a schedule stands; the engine moves it forward (RecurringScheduleStore.swapSchedule). */
export interface RecurringScheduleState {
  readonly paused: boolean;
  /** The next occurrence not yet created, or null when the schedule has ended (endAt, limit). */
  readonly nextAt: number | null;
  /** The latest occurrence created, or null before the first. */
  readonly lastAt: number | null;
  /** Occurrences created so far (what `limit` counts). */
  readonly count: number;
}

export interface RecurringScheduleRecord extends RecurringScheduleDefinition, RecurringScheduleState {
  /** Bumped by every change of the definition. */
  readonly rev: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * A record from a definition and a state, built field by field. The hot paths (an upsert,
 * planning each occurrence) build records here, never with object spread: V8 copied a spread
 * of these records on a slow path that made an upsert about 2.5x as costly (ADR 0031).
 */
export function scheduleRecord(def: RecurringScheduleDefinition, state: RecurringScheduleState, rev: number, createdAt: number, updatedAt: number): RecurringScheduleRecord {
  return {
    id: def.id,
    topic: def.topic,
    payload: def.payload,
    cron: def.cron,
    tz: def.tz,
    everyMs: def.everyMs,
    startAt: def.startAt,
    endAt: def.endAt,
    limit: def.limit,
    misfire: def.misfire,
    ttrMs: def.ttrMs,
    maxAttempts: def.maxAttempts,
    backoff: def.backoff,
    url: def.url,
    priority: def.priority,
    paused: state.paused,
    nextAt: state.nextAt,
    lastAt: state.lastAt,
    count: state.count,
    rev,
    createdAt,
    updatedAt,
  };
}

/** The record moved to another state (rev and times unchanged). */
export function withState(record: RecurringScheduleRecord, state: RecurringScheduleState): RecurringScheduleRecord {
  return scheduleRecord(record, state, record.rev, record.createdAt, record.updatedAt);
}

/**
 * The task id of the occurrence of schedule `scheduleId` at `at`: `<scheduleId>:<at>`. The
 * part after the last ':' is always the decimal time (digits only, no leading zero), so two
 * different (schedule, time) pairs never give the same id, whatever ':' the schedule ids
 * hold. ('@' would read better but is outside the id alphabet.)
 */
export function occurrenceId(scheduleId: string, at: number): string {
  return `${scheduleId}:${at}`;
}

/** The definition's fields, for comparing two definitions (upsert of an unchanged one is a no-op). */
export function sameDefinition(a: RecurringScheduleDefinition, b: RecurringScheduleDefinition): boolean {
  return (
    a.id === b.id &&
    a.topic === b.topic &&
    a.payload === b.payload &&
    a.cron === b.cron &&
    a.tz === b.tz &&
    a.everyMs === b.everyMs &&
    a.startAt === b.startAt &&
    a.endAt === b.endAt &&
    a.limit === b.limit &&
    a.misfire === b.misfire &&
    a.ttrMs === b.ttrMs &&
    a.maxAttempts === b.maxAttempts &&
    a.backoff.baseMs === b.backoff.baseMs &&
    a.backoff.factor === b.backoff.factor &&
    a.backoff.maxMs === b.backoff.maxMs &&
    a.backoff.jitter === b.backoff.jitter &&
    a.url === b.url &&
    a.priority === b.priority
  );
}

/** Whether the rule (when occurrences fall) differs: then the next occurrence is computed anew. */
export function sameRule(a: RecurringScheduleDefinition, b: RecurringScheduleDefinition): boolean {
  return a.cron === b.cron && a.tz === b.tz && a.everyMs === b.everyMs && a.startAt === b.startAt && a.endAt === b.endAt && a.limit === b.limit;
}
