/**
 * Which occurrences to create now, and where the schedule stands after creating them: the
 * engine's schedule loop (src/engine/recurring/recurring-loop.ts) runs this for every active schedule
 * and then creates the tasks (idempotent ids) and records the new state.
 *
 * Two steps:
 * 1. Misfire. Occurrences are created ahead of time (step 2), so an occurrence whose time
 *    passed more than `graceMs` ago without being created was missed while no delayq
 *    process ran. The schedule's `misfire` decides: `skip` creates none of them, `once`
 *    the latest, `all` each (the latest MAX_CATCH_UP, in order).
 * 2. Ahead. Occurrences are created in order until the latest created lies more than
 *    `leadMs` in the future, so the next occurrence is always a pending task before its
 *    time, and fires on the millisecond like any task. The first occurrence is created
 *    once it is due within `leadMs`, like every later one (ADR 0030): a schedule whose
 *    first time is far off holds no task until then.
 *
 * Example, `everyMs: 1000`, leadMs 1000, graceMs 1000, misfire `once`: state nextAt
 * 10_000, lastAt 9_000, and the process comes back at now = 15_500. Missed (before
 * 14_500): 10_000 ... 14_000; `once` creates 14_000. Then ahead: 15_000 (late but within
 * grace), 16_000, 17_000 (> now + lead: stop). State: lastAt 17_000, nextAt 18_000.
 */
import { MAX_CATCH_UP, type RecurringScheduleRecord, type RecurringScheduleState } from './model.js';
import type { NextOccurrence } from './rule.js';

export interface PlanOptions {
  /** The latest created occurrence is kept more than this far ahead of now. */
  readonly leadMs: number;
  /** An occurrence not created this long after its time counts as missed (misfire). */
  readonly graceMs: number;
  /** Occurrences one plan creates ahead at most (bounds one pass; the next pass goes on). */
  readonly maxAhead?: number;
}

export interface Plan {
  /** Occurrence times to create, ascending. */
  readonly create: readonly number[];
  /** The state once they are created. */
  readonly state: RecurringScheduleState;
  /** Missed occurrences not created (misfire `skip`, `once`, or beyond MAX_CATCH_UP). */
  readonly skipped: number;
}

/** Enumerations of missed occurrences step at most this often before jumping ahead. */
const MAX_MISSED_STEPS = 100_000;

export function planOccurrences(record: RecurringScheduleRecord, next: NextOccurrence, now: number, options: PlanOptions): Plan {
  const create: number[] = [];
  let { nextAt, lastAt, count } = record;
  const { limit } = record;
  let skipped = 0;
  if (record.paused) return { create, state: record, skipped };
  const room = (): number => (limit === null ? Infinity : limit - count - create.length);

  const cutoff = now - options.graceMs;
  if (nextAt !== null && nextAt < cutoff) {
    const missed: number[] = [];
    let total = 0;
    let steps = 0;
    let at: number | null = nextAt;
    while (at !== null && at < cutoff) {
      missed.push(at);
      if (missed.length > MAX_CATCH_UP) missed.shift();
      total++;
      if (++steps > MAX_MISSED_STEPS && missed.length > 1) {
        // A long downtime of a frequent rule: jump to the last stretch holding about as many.
        const span = missed[missed.length - 1]! - missed[0]!;
        const resume = next(Math.max(at, cutoff - 1 - 2 * span));
        if (resume !== null && resume > at) {
          missed.length = 0;
          steps = 0;
          total++; // at least one was jumped over; the count of skipped ones is a lower bound
          at = resume;
          continue;
        }
      }
      at = next(at);
    }
    const chosen = record.misfire === 'skip' ? [] : record.misfire === 'once' ? missed.slice(-1) : missed;
    const allowed = chosen.slice(0, Math.max(0, room()));
    create.push(...allowed);
    skipped = total - allowed.length;
    if (allowed.length > 0) lastAt = allowed[allowed.length - 1]!;
    nextAt = at;
  }

  const maxAhead = options.maxAhead ?? MAX_CATCH_UP;
  let ahead = 0;
  // The first occurrence waits until it is due within the lead too (ADR 0030): a schedule
  // whose next time is far off holds no task yet.
  while (nextAt !== null && room() > 0 && ahead < maxAhead && (lastAt ?? nextAt) <= now + options.leadMs) {
    create.push(nextAt);
    lastAt = nextAt;
    ahead++;
    nextAt = next(nextAt);
  }
  count += create.length;
  if (limit !== null && count >= limit) nextAt = null;
  return { create, state: { paused: false, nextAt, lastAt, count }, skipped };
}

/**
 * When the schedule next needs a plan: now when it is behind, else when its latest created
 * occurrence comes within leadMs; null when it has ended or is paused.
 */
export function planDueAt(state: RecurringScheduleState, now: number, leadMs: number): number | null {
  if (state.paused || state.nextAt === null) return null;
  if (state.lastAt === null) return Math.max(now, state.nextAt - leadMs);
  return Math.max(now, state.lastAt - leadMs);
}
