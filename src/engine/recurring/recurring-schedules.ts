/**
 * Recurring schedules as the library manages them (DelayQueue.schedules, docs/cron.md):
 * checks a definition (core/schedule/validate.ts), stores it, and has the schedule loop
 * create its next occurrences at once. Changes go through the store's compare-and-swap,
 * retried on a conflict, so a change never overwrites a schedule moved forward meanwhile by
 * a loop in this or another process.
 */
import { DelayQError } from '../../core/errors.js';
import type { Clock, RecurringScheduleStore, RecurringScheduleSwap } from '../../core/ports/index.js';
import { MAX_CATCH_UP, occurrenceId, sameDefinition, sameRule, scheduleRecord, type RecurringScheduleDefinition, type RecurringScheduleRecord } from '../../core/schedule/model.js';
import { nextOccurrences } from '../../core/schedule/next.js';
import { compileRule, type NextOccurrence } from '../../core/schedule/rule.js';
import { schedulePage } from '../../core/schedule/page.js';
import { validateRecurring, validateRecurringRule, validateScheduleId, validateSchedulePage, type RecurringRuleInput, type RecurringScheduleInput } from '../../core/schedule/validate.js';
import type { BackoffPolicy } from '../../core/task/model.js';
import { validateBatch, validateIntOption, type Limits, type TaskDefaults } from '../../core/task/validate.js';
import { compileCron } from './cron-pattern.js';
import type { InFlight } from '../in-flight.js';
import type { LoopContext } from '../loop-context.js';
import type { RecurringScheduleCounts } from './known-schedules.js';
import type { RecurringScheduleLoop } from './recurring-loop.js';

/** A schedule as callers see it. */
export interface RecurringScheduleInfo {
  readonly id: string;
  readonly topic: string;
  readonly payload: unknown;
  readonly cron: string | null;
  readonly tz: string;
  readonly everyMs: number | null;
  readonly startAt: number | null;
  readonly endAt: number | null;
  readonly limit: number | null;
  readonly misfire: RecurringScheduleRecord['misfire'];
  readonly ttrMs: number;
  readonly maxAttempts: number;
  readonly backoff: BackoffPolicy;
  /** The push target of every occurrence (docs/push.md, "Per-task url"), or null. */
  readonly url: string | null;
  /** The priority of every occurrence (0 by default). */
  readonly priority: number;
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

export interface RecurringUpsertResult {
  readonly schedule: RecurringScheduleInfo;
  /** true when there was no schedule with this id. */
  readonly created: boolean;
  /** false when the schedule existed with this very definition: nothing was changed. */
  readonly changed: boolean;
}

/** The most times `next` previews. */
export const MAX_PREVIEW = 1_000;
const MAX_CONFLICTS = 100;

interface UpsertItem {
  readonly def: RecurringScheduleDefinition;
  readonly resolve: (result: RecurringUpsertResult) => void;
  readonly reject: (error: unknown) => void;
}

/** Runs `check` for item `index` of `count`, naming the index in the error as scheduleMany does. */
function atIndex<T>(count: number, index: number, check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw withIndex(count, index, error);
  }
}

async function atIndexAsync(count: number, index: number, check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (error) {
    throw withIndex(count, index, error);
  }
}

function withIndex(count: number, index: number, error: unknown): unknown {
  if (count > 1 && error instanceof DelayQError && error.details?.['index'] === undefined)
    return new DelayQError(error.code, `schedules[${index}].${error.message}`, { ...error.details, index });
  return error;
}

export function toScheduleInfo(r: RecurringScheduleRecord): RecurringScheduleInfo {
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
    priority: r.priority,
    paused: r.paused,
    nextAt: r.nextAt,
    lastAt: r.lastAt,
    count: r.count,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/** What recurring schedules need of their queue, besides the loop context. */
export interface RecurringSchedulesParams {
  readonly loop: RecurringScheduleLoop;
  readonly limits: Limits;
  readonly defaults: TaskDefaults;
  /** Throws QUEUE_CLOSED once the queue is closing. */
  readonly assertOpen: () => void;
  /** Cancels pending occurrence tasks by id (those not pending are left alone). */
  readonly cancel: (ids: readonly string[]) => Promise<boolean[]>;
  /** The checks of a task's own push url (SSRF rules: INVALID_URL; a secret: PUSH_NO_SECRET), as `schedule` makes them. */
  readonly checkPushTarget: (topic: string, url: string) => Promise<void>;
}

export class RecurringSchedules {
  /** Upserts of this turn, upserted together on the next (see upsert). */
  private queued: UpsertItem[] | null = null;
  private readonly store: RecurringScheduleStore;
  private readonly clock: Clock;
  private readonly inFlight: InFlight;
  private readonly loop: RecurringScheduleLoop;
  private readonly limits: Limits;
  private readonly defaults: TaskDefaults;
  private readonly assertOpen: () => void;
  private readonly cancel: RecurringSchedulesParams['cancel'];
  private readonly checkPushTarget: RecurringSchedulesParams['checkPushTarget'];

  constructor(context: Pick<LoopContext, 'store' | 'clock' | 'inFlight'>, params: RecurringSchedulesParams) {
    ({ store: { schedules: this.store }, clock: this.clock, inFlight: this.inFlight } = context);
    ({ loop: this.loop, limits: this.limits, defaults: this.defaults, assertOpen: this.assertOpen, cancel: this.cancel, checkPushTarget: this.checkPushTarget } = params);
  }

  /**
   * Creates or changes schedule `id`. The same definition again changes nothing. A new rule
   * (cron, tz, everyMs, startAt, endAt, limit) takes effect from the next occurrence not yet
   * created; occurrences already created stay as they are. Calls made in the same turn of
   * the event loop share their store calls (one read, one write, one swap for all of them).
   */
  async upsert(id: string, input: RecurringScheduleInput): Promise<RecurringUpsertResult> {
    this.assertOpen();
    const def = validateRecurring(id, input, compileCron, this.clock.now(), this.limits, this.defaults);
    if (def.url !== null) await this.checkPushTarget(def.topic, def.url);
    return new Promise<RecurringUpsertResult>((resolve, reject) => {
      if (this.queued === null) {
        const items: UpsertItem[] = (this.queued = []);
        setImmediate(() => {
          this.queued = null;
          void this.upsertAll(items);
        });
      }
      this.queued.push({ def, resolve, reject });
    });
  }

  /**
   * Creates or changes several schedules in one call (up to `limits.maxBatch`), each as
   * `upsert` would, with one read, one write and one swap for all of them. Every definition
   * is checked first: a bad one rejects the call (its index in `details.index`) and nothing is
   * stored. `result[i]` answers `schedules[i]`; an id given twice is applied in order.
   */
  async upsertMany(schedules: readonly (RecurringScheduleInput & { id: string })[]): Promise<RecurringUpsertResult[]> {
    this.assertOpen();
    validateBatch(schedules, this.limits, 'schedules');
    const now = this.clock.now();
    const defs = schedules.map((given, index) =>
      atIndex(schedules.length, index, () => {
        if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new DelayQError('INVALID_ARGUMENT', 'schedule: must be an object', { field: 'schedule' });
        const { id, ...input } = given;
        return validateRecurring(id, input, compileCron, now, this.limits, this.defaults);
      }),
    );
    for (const [index, def] of defs.entries()) if (def.url !== null) await atIndexAsync(defs.length, index, () => this.checkPushTarget(def.topic, def.url!));
    const items: UpsertItem[] = [];
    const results = defs.map((def) => new Promise<RecurringUpsertResult>((resolve, reject) => items.push({ def, resolve, reject })));
    await this.upsertAll(items);
    return Promise.all(results);
  }

  /** Upserts the items, an id given twice in a later round, so each sees the one before. */
  private async upsertAll(items: readonly UpsertItem[]): Promise<void> {
    let remaining = items;
    while (remaining.length > 0) {
      const round: UpsertItem[] = [];
      const later: UpsertItem[] = [];
      const ids = new Set<string>();
      for (const item of remaining) {
        if (ids.has(item.def.id)) later.push(item);
        else {
          ids.add(item.def.id);
          round.push(item);
        }
      }
      await this.upsertRound(round);
      remaining = later;
    }
  }

  /**
   * One write of the new schedules that create nothing yet (no read first), one read of the
   * others, one write of the new ones among them, one swap of the changed ones (retried on a
   * conflict), then one plan of them all.
   */
  private async upsertRound(items: readonly UpsertItem[]): Promise<void> {
    const applied: Array<{ item: UpsertItem; record: RecurringScheduleRecord; next: NextOccurrence; created: boolean }> = [];
    let todo = items;
    try {
      // Stored already, as putNewSchedules answered: the first attempt need not read these.
      const known = await this.putNew(items, applied);
      const created = new Set(applied.map((a) => a.item));
      todo = items.filter((item) => !created.has(item));
      for (let attempt = 0; attempt < MAX_CONFLICTS && todo.length > 0; attempt++) {
        const unknown = todo.filter((item) => !known.has(item));
        const read = unknown.length === 0 ? [] : await this.inFlight.track(this.store.getSchedules(unknown.map((item) => item.def.id)));
        const readOf = new Map(unknown.map((item, i) => [item, read[i] ?? null]));
        const stored = todo.map((item) => known.get(item) ?? readOf.get(item) ?? null);
        known.clear();
        const now = this.clock.now();
        let creates: RecurringScheduleRecord[] = [];
        const createRules: NextOccurrence[] = [];
        const createItems: UpsertItem[] = [];
        const swapRules: NextOccurrence[] = [];
        const swaps: RecurringScheduleSwap[] = [];
        const swapItems: UpsertItem[] = [];
        todo.forEach((item, i) => {
          const { def } = item;
          const existing = stored[i] ?? null;
          if (existing !== null && sameDefinition(existing, def)) return item.resolve({ schedule: toScheduleInfo(existing), created: false, changed: false });
          const next = this.loop.known.ruleOfDefinition(def);
          if (existing === null) {
            creates.push(newRecord(def, next, now));
            createRules.push(next);
            createItems.push(item);
            return;
          }
          let { nextAt } = existing;
          if (!sameRule(existing, def)) nextAt = next(Math.max(existing.lastAt ?? -Infinity, now - 1));
          if (def.limit !== null && existing.count >= def.limit) nextAt = null;
          swaps.push({ expected: existing, next: scheduleRecord(def, { paused: existing.paused, nextAt, lastAt: existing.lastAt, count: existing.count }, existing.rev + 1, existing.createdAt, now) });
          swapRules.push(next);
          swapItems.push(item);
        });
        // New schedules are stored with their first occurrences created already: no swap after.
        if (creates.length > 0) {
          creates = await this.loop.createAhead(creates, createRules);
          await this.inFlight.track(this.store.putSchedules(creates));
        }
        createItems.forEach((item, i) => applied.push({ item, record: creates[i]!, next: createRules[i]!, created: true }));
        const swapped = swaps.length === 0 ? [] : await this.inFlight.track(this.store.swapSchedules(swaps));
        const again: UpsertItem[] = [];
        swapItems.forEach((item, i) => {
          if (swapped[i] === true) applied.push({ item, record: swaps[i]!.next, next: swapRules[i]!, created: false });
          else again.push(item);
        });
        todo = again;
      }
    } catch (error) {
      for (const item of todo) item.reject(error);
      todo = [];
    }
    for (const item of todo) item.reject(conflict(item.def.id));
    if (applied.length === 0) return;
    try {
      const planned = await this.loop.applyMany(
        applied.map((a) => a.record),
        applied.map((a) => a.next),
      );
      applied.forEach(({ item, created }, i) => item.resolve({ schedule: toScheduleInfo(planned[i]!), created, changed: true }));
    } catch (error) {
      for (const { item } of applied) item.reject(error);
    }
  }

  /**
   * Writes the items that are new schedules creating nothing yet (their first occurrence is
   * further off than the lead: an import, the common case) with putNewSchedules, no read
   * before. Those stored are added to `applied`; the answer holds the stored schedule of
   * each item whose id has one, for the read-and-swap path.
   */
  private async putNew(
    items: readonly UpsertItem[],
    applied: Array<{ item: UpsertItem; record: RecurringScheduleRecord; next: NextOccurrence; created: boolean }>,
  ): Promise<Map<UpsertItem, RecurringScheduleRecord>> {
    const known = new Map<UpsertItem, RecurringScheduleRecord>();
    const now = this.clock.now();
    const fresh: Array<{ item: UpsertItem; record: RecurringScheduleRecord; next: NextOccurrence }> = [];
    for (const item of items) {
      const next = this.loop.known.ruleOfDefinition(item.def);
      const record = newRecord(item.def, next, now);
      if (this.loop.plansNothingNow(record, now)) fresh.push({ item, record, next });
    }
    if (fresh.length === 0) return known;
    const answers = await this.inFlight.track(this.store.putNewSchedules(fresh.map((f) => f.record)));
    fresh.forEach(({ item, record, next }, i) => {
      const stored = answers[i] ?? null;
      if (stored === null) applied.push({ item, record, next, created: true });
      else known.set(item, stored);
    });
    return known;
  }

  async get(id: string): Promise<RecurringScheduleInfo | null> {
    validateScheduleId(id, this.limits);
    const record = await this.inFlight.track(this.store.getSchedule(id));
    return record === null ? null : toScheduleInfo(record);
  }

  /** Every schedule, by id. Over HTTP, or for many schedules, page with listPage. */
  async list(): Promise<RecurringScheduleInfo[]> {
    return (await this.inFlight.track(this.store.listSchedules())).map(toScheduleInfo);
  }

  /**
   * A page of the schedules by id: those after `afterId`, at most `limit` (default 100, at
   * most 1,000), fewer when their payloads pass 4 MiB; `next` is the `afterId` of the page
   * after, null on the last. The store is read whole (its listSchedules), the answer is not.
   */
  async listPage(options: { afterId?: string; limit?: number } = {}): Promise<{ schedules: RecurringScheduleInfo[]; next: string | null }> {
    const query = validateSchedulePage(options, this.limits);
    const page = schedulePage(await this.inFlight.track(this.store.listSchedules()), query);
    return { schedules: page.items.map(toScheduleInfo), next: page.next };
  }

  /** Deletes the schedule and cancels its occurrences still to come: true if there was one. */
  async remove(id: string): Promise<boolean> {
    this.assertOpen();
    validateScheduleId(id, this.limits);
    const record = await this.inFlight.track(this.store.getSchedule(id));
    if (record === null) return false;
    const deleted = await this.inFlight.track(this.store.deleteSchedule(id));
    this.loop.known.forget(id);
    await this.cancelAhead(record);
    return deleted;
  }

  /**
   * Stops creating occurrences and cancels those created ahead that are not due yet.
   * Occurrences due while paused are skipped (not misfires).
   */
  async pause(id: string): Promise<RecurringScheduleInfo> {
    return this.change(id, async (r) => {
      if (r.paused) return null;
      const cancelled = await this.cancelAhead(r);
      return { ...r, paused: true, count: r.count - cancelled, updatedAt: this.clock.now() };
    });
  }

  /** Creates occurrences again, from the first at or after now. */
  async resume(id: string): Promise<RecurringScheduleInfo> {
    return this.change(id, async (r) => {
      if (!r.paused) return null;
      const now = this.clock.now();
      const next = this.loop.known.ruleOf(r);
      const nextAt = r.limit !== null && r.count >= r.limit ? null : next(now - 1);
      return { ...r, paused: false, nextAt, lastAt: r.lastAt !== null && r.lastAt > now ? null : r.lastAt, updatedAt: now };
    });
  }

  /**
   * How many schedules are active, paused or ended (no next occurrence: endAt or limit
   * reached), from this process's copy of the list (re-read after changes elsewhere, checked
   * every `scheduleSyncMs`; its own changes at once), not from the store: cheap enough for
   * every metrics scrape.
   */
  countByState(): RecurringScheduleCounts {
    return this.loop.known.countByState();
  }

  /** The next `n` occurrence times at or after now (fewer when the schedule ends first). */
  async next(id: string, n = 10): Promise<number[]> {
    validateScheduleId(id, this.limits);
    validateIntOption(n, 'n', 1, MAX_PREVIEW);
    const record = await this.inFlight.track(this.store.getSchedule(id));
    if (record === null) throw notFound(id);
    const now = this.clock.now();
    const times = nextOccurrences(this.loop.known.ruleOf(record), now - 1, n);
    if (record.limit === null) return times;
    // Occurrences created already are counted; beyond the latest, only what the limit leaves.
    const created = times.filter((t) => record.lastAt !== null && t <= record.lastAt).length;
    return times.slice(0, created + Math.max(0, record.limit - record.count));
  }

  /**
   * The next `n` times a rule would fire at or after now, for a schedule not stored (what
   * `delayq cron next --cron` shows): the rule is checked as `upsert` checks it
   * (INVALID_SCHEDULE with the reason), with the same time zone and daylight-saving rules;
   * a `limit` caps the times as it would cap a new schedule's occurrences. Reads no store.
   */
  async preview(rule: RecurringRuleInput, n = 10): Promise<number[]> {
    this.assertOpen();
    validateIntOption(n, 'n', 1, MAX_PREVIEW);
    const now = this.clock.now();
    const checked = validateRecurringRule(rule, compileCron, now);
    const times = nextOccurrences(compileRule(checked, compileCron), now - 1, n);
    return checked.limit === null ? times : times.slice(0, checked.limit);
  }

  private async change(id: string, update: (r: RecurringScheduleRecord) => Promise<RecurringScheduleRecord | null>): Promise<RecurringScheduleInfo> {
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
  private async cancelAhead(r: RecurringScheduleRecord): Promise<number> {
    const now = this.clock.now();
    if (r.lastAt === null || r.lastAt <= now) return 0;
    const times = nextOccurrences(this.loop.known.ruleOf(r), now, MAX_CATCH_UP).filter((t) => t <= r.lastAt!);
    if (times.length === 0) return 0;
    const results = await this.cancel(times.map((t) => occurrenceId(r.id, t)));
    return results.filter(Boolean).length;
  }
}

/** A schedule as created: nothing created yet, its first occurrence the rule's first from now. */
function newRecord(def: RecurringScheduleDefinition, next: NextOccurrence, now: number): RecurringScheduleRecord {
  return scheduleRecord(def, { paused: false, nextAt: next(now - 1), lastAt: null, count: 0 }, 1, now, now);
}

function notFound(id: string): DelayQError {
  return new DelayQError('SCHEDULE_NOT_FOUND', `schedule ${id}: not found`, { id });
}

function conflict(id: string): DelayQError {
  return new DelayQError('STORE_UNAVAILABLE', `schedule ${id}: changed concurrently too many times; try again`, { id });
}
