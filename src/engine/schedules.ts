/**
 * Recurring schedules as the library manages them (DelayQueue.schedules, docs/cron.md):
 * checks a definition (core/schedule/validate.ts), stores it, and has the schedule loop
 * create its next occurrences at once. Changes go through the store's compare-and-swap,
 * retried on a conflict, so a change never overwrites a schedule moved forward meanwhile by
 * a loop in this or another process.
 */
import { DelayQError } from '../core/errors.js';
import type { Clock, ScheduleStore } from '../core/ports.js';
import { MAX_CATCH_UP, occurrenceId, sameDefinition, sameRule, type ScheduleRecord } from '../core/schedule/model.js';
import { nextOccurrences } from '../core/schedule/next.js';
import { compileRule } from '../core/schedule/rule.js';
import { validateRecurring, validateScheduleId, type RecurringInput } from '../core/schedule/validate.js';
import type { BackoffPolicy } from '../core/task/model.js';
import { validateIntOption, type Limits, type TaskDefaults } from '../core/task/validate.js';
import { compileCron } from './cron-pattern.js';
import type { InFlight } from './in-flight.js';
import type { ScheduleLoop } from './schedule-loop.js';

/** A schedule as callers see it. */
export interface ScheduleInfo {
  readonly id: string;
  readonly topic: string;
  readonly payload: unknown;
  readonly cron: string | null;
  readonly tz: string;
  readonly everyMs: number | null;
  readonly startAt: number | null;
  readonly endAt: number | null;
  readonly limit: number | null;
  readonly misfire: ScheduleRecord['misfire'];
  readonly ttrMs: number;
  readonly maxAttempts: number;
  readonly backoff: BackoffPolicy;
  /** The push target of every occurrence (docs/push.md, "Per-task url"), or null. */
  readonly url: string | null;
  readonly paused: boolean;
  /** The next occurrence not yet created as a task, or null once the schedule has ended. */
  readonly nextAt: number | null;
  /** The latest occurrence created as a task (its id: `<id>:<lastAt>`). */
  readonly lastAt: number | null;
  /** Occurrences created so far. */
  readonly count: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface UpsertScheduleResult {
  readonly schedule: ScheduleInfo;
  /** true when there was no schedule with this id. */
  readonly created: boolean;
  /** false when the schedule existed with this very definition: nothing was changed. */
  readonly changed: boolean;
}

/** The most times `next` previews. */
export const MAX_PREVIEW = 1_000;
const MAX_CONFLICTS = 100;

export function toScheduleInfo(r: ScheduleRecord): ScheduleInfo {
  return {
    id: r.id,
    topic: r.topic,
    payload: JSON.parse(r.payload) as unknown,
    cron: r.cron,
    tz: r.tz,
    everyMs: r.everyMs,
    startAt: r.startAt,
    endAt: r.endAt,
    limit: r.limit,
    misfire: r.misfire,
    ttrMs: r.ttrMs,
    maxAttempts: r.maxAttempts,
    backoff: r.backoff,
    url: r.url,
    paused: r.paused,
    nextAt: r.nextAt,
    lastAt: r.lastAt,
    count: r.count,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export class Schedules {
  constructor(
    private readonly store: ScheduleStore,
    private readonly loop: ScheduleLoop,
    private readonly clock: Clock,
    private readonly inFlight: InFlight,
    private readonly limits: Limits,
    private readonly defaults: TaskDefaults,
    private readonly assertOpen: () => void,
    /** Cancels pending occurrence tasks by id (those not pending are left alone). */
    private readonly cancel: (ids: readonly string[]) => Promise<boolean[]>,
    /** The checks of a task's own push url (SSRF rules: INVALID_URL; a secret: PUSH_NO_SECRET), as `schedule` makes them. */
    private readonly checkPushTarget: (topic: string, url: string) => Promise<void>,
  ) {}

  /**
   * Creates or changes schedule `id`. The same definition again changes nothing. A new rule
   * (cron, tz, everyMs, startAt, endAt, limit) takes effect from the next occurrence not yet
   * created; occurrences already created stay as they are.
   */
  async upsert(id: string, input: RecurringInput): Promise<UpsertScheduleResult> {
    this.assertOpen();
    const def = validateRecurring(id, input, compileCron, this.limits, this.defaults);
    if (def.url !== null) await this.checkPushTarget(def.topic, def.url);
    const next = compileRule(def, compileCron);
    for (let i = 0; i < MAX_CONFLICTS; i++) {
      const existing = await this.inFlight.track(this.store.getSchedule(def.id));
      const now = this.clock.now();
      if (existing !== null && sameDefinition(existing, def)) return { schedule: toScheduleInfo(existing), created: false, changed: false };
      if (existing === null) {
        const record: ScheduleRecord = { ...def, paused: false, nextAt: next(now - 1), lastAt: null, count: 0, rev: 1, createdAt: now, updatedAt: now };
        await this.inFlight.track(this.store.putSchedule(record));
        return { schedule: toScheduleInfo(await this.loop.apply(record)), created: true, changed: true };
      }
      let { nextAt } = existing;
      if (!sameRule(existing, def)) nextAt = next(Math.max(existing.lastAt ?? -Infinity, now - 1));
      if (def.limit !== null && existing.count >= def.limit) nextAt = null;
      const record: ScheduleRecord = { ...existing, ...def, nextAt, rev: existing.rev + 1, updatedAt: now };
      if (await this.inFlight.track(this.store.swapSchedule(existing, record))) {
        return { schedule: toScheduleInfo(await this.loop.apply(record)), created: false, changed: true };
      }
    }
    throw conflict(def.id);
  }

  async get(id: string): Promise<ScheduleInfo | null> {
    validateScheduleId(id, this.limits);
    const record = await this.inFlight.track(this.store.getSchedule(id));
    return record === null ? null : toScheduleInfo(record);
  }

  async list(): Promise<ScheduleInfo[]> {
    return (await this.inFlight.track(this.store.listSchedules())).map(toScheduleInfo);
  }

  /** Deletes the schedule and cancels its occurrences still to come: true if there was one. */
  async remove(id: string): Promise<boolean> {
    this.assertOpen();
    validateScheduleId(id, this.limits);
    const record = await this.inFlight.track(this.store.getSchedule(id));
    if (record === null) return false;
    const deleted = await this.inFlight.track(this.store.deleteSchedule(id));
    this.loop.forget(id);
    await this.cancelAhead(record);
    return deleted;
  }

  /**
   * Stops creating occurrences and cancels those created ahead that are not due yet.
   * Occurrences due while paused are skipped (not misfires).
   */
  async pause(id: string): Promise<ScheduleInfo> {
    return this.change(id, async (r) => {
      if (r.paused) return null;
      const cancelled = await this.cancelAhead(r);
      return { ...r, paused: true, count: r.count - cancelled, updatedAt: this.clock.now() };
    });
  }

  /** Creates occurrences again, from the first at or after now. */
  async resume(id: string): Promise<ScheduleInfo> {
    return this.change(id, async (r) => {
      if (!r.paused) return null;
      const now = this.clock.now();
      const next = this.loop.ruleOf(r);
      const nextAt = r.limit !== null && r.count >= r.limit ? null : next(now - 1);
      return { ...r, paused: false, nextAt, lastAt: r.lastAt !== null && r.lastAt > now ? null : r.lastAt, updatedAt: now };
    });
  }

  /** The next `n` occurrence times at or after now (fewer when the schedule ends first). */
  async next(id: string, n = 10): Promise<number[]> {
    validateScheduleId(id, this.limits);
    validateIntOption(n, 'n', 1, MAX_PREVIEW);
    const record = await this.inFlight.track(this.store.getSchedule(id));
    if (record === null) throw notFound(id);
    const now = this.clock.now();
    const times = nextOccurrences(this.loop.ruleOf(record), now - 1, n);
    if (record.limit === null) return times;
    // Occurrences created already are counted; beyond the latest, only what the limit leaves.
    const created = times.filter((t) => record.lastAt !== null && t <= record.lastAt).length;
    return times.slice(0, created + Math.max(0, record.limit - record.count));
  }

  private async change(id: string, update: (r: ScheduleRecord) => Promise<ScheduleRecord | null>): Promise<ScheduleInfo> {
    this.assertOpen();
    validateScheduleId(id, this.limits);
    for (let i = 0; i < MAX_CONFLICTS; i++) {
      const existing = await this.inFlight.track(this.store.getSchedule(id));
      if (existing === null) throw notFound(id);
      const record = await update(existing);
      if (record === null) return toScheduleInfo(existing);
      if (await this.inFlight.track(this.store.swapSchedule(existing, record))) return toScheduleInfo(await this.loop.apply(record));
    }
    throw conflict(id);
  }

  /** Cancels the occurrences created ahead of now; how many were pending and are now cancelled. */
  private async cancelAhead(r: ScheduleRecord): Promise<number> {
    const now = this.clock.now();
    if (r.lastAt === null || r.lastAt <= now) return 0;
    const times = nextOccurrences(this.loop.ruleOf(r), now, MAX_CATCH_UP).filter((t) => t <= r.lastAt!);
    if (times.length === 0) return 0;
    const results = await this.cancel(times.map((t) => occurrenceId(r.id, t)));
    return results.filter(Boolean).length;
  }
}

function notFound(id: string): DelayQError {
  return new DelayQError('SCHEDULE_NOT_FOUND', `schedule ${id}: not found`, { id });
}

function conflict(id: string): DelayQError {
  return new DelayQError('STORE_UNAVAILABLE', `schedule ${id}: changed concurrently too many times; try again`, { id });
}
