/** The store port's recurring schedule role: whole records, compare-and-swap, a version. */
import type { RecurringScheduleRecord } from '../schedule/model.js';

/**
 * Recurring schedules (src/core/schedule), durable as tasks are. Every engine process
 * reads them all (listSchedules) when it starts and again whenever schedulesVersion has
 * changed (checked every `scheduleSyncMs`), and moves a
 * schedule forward with swapSchedule after creating its occurrences: a compare-and-swap,
 * so two processes planning the same schedule move it once, and a change made meanwhile
 * (an upsert, a pause) is never overwritten by a plan made before it.
 */
export interface RecurringScheduleStore {
  /** Creates or replaces the schedule `record.id`. */
  putSchedule(record: RecurringScheduleRecord): Promise<void>;
  getSchedule(id: string): Promise<RecurringScheduleRecord | null>;
  /** `putSchedule` of many schedules (distinct ids) in one call. */
  putSchedules(records: readonly RecurringScheduleRecord[]): Promise<void>;
  /**
   * Stores each record whose id has no schedule yet (distinct ids), in one call: one answer
   * each in input order, null when it was stored, the stored schedule (left as it is) when
   * the id has one. An upsert of new schedules writes without reading first.
   */
  putNewSchedules(records: readonly RecurringScheduleRecord[]): Promise<(RecurringScheduleRecord | null)[]>;
  /** `getSchedule` of many ids in one call, one answer each in input order. */
  getSchedules(ids: readonly string[]): Promise<(RecurringScheduleRecord | null)[]>;
  /** Every schedule, by id in ascending order. */
  listSchedules(): Promise<RecurringScheduleRecord[]>;
  /** True if there was one. */
  deleteSchedule(id: string): Promise<boolean>;
  /**
   * Replaces the schedule with `next` only if it is stored exactly as `expected` (every
   * field equal, as read by getSchedule or listSchedules); false, changing nothing, when it
   * changed since or is gone. Atomic like a task change.
   */
  swapSchedule(expected: RecurringScheduleRecord, next: RecurringScheduleRecord): Promise<boolean>;
  /**
   * `swapSchedule` of many schedules in one call (distinct ids), one answer each in input
   * order; each swap is atomic on its own, not the call as a whole. The schedule loop moves
   * every due schedule through it at once.
   */
  swapSchedules(swaps: readonly RecurringScheduleSwap[]): Promise<boolean[]>;
  /**
   * A token that changes whenever what another process must re-read changes: a schedule
   * put or deleted, or swapped to a new definition (`rev` or `createdAt`) or paused state.
   * A swap that only moves a schedule forward (same rev, createdAt and paused: what the
   * schedule loop does at every occurrence) leaves it as it is, so a process re-reads the
   * list only after a change it has to learn of, not every `scheduleSyncMs` (ADR 0033).
   * Changed atomically with the write that changes it.
   */
  schedulesVersion(): Promise<string>;
}

export interface RecurringScheduleSwap {
  readonly expected: RecurringScheduleRecord;
  readonly next: RecurringScheduleRecord;
}

