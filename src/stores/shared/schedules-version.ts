/**
 * schedulesVersion (ADR 0033) for a store whose every schedule write passes through this
 * process: the memory store, and SQLite, whose file one process holds (lock.ts). A counter
 * that moves once per write another reader would have to re-read: a put, a delete, a put
 * that created something, a swap to a new definition. A swap that only moves a schedule
 * forward leaves it. Redis bumps its counter by the same rules inside its schedule scripts
 * (schedule-put.lua, schedule-put-new.lua, schedule-swap.lua, schedule-delete.lua), since
 * other processes write the same namespace.
 */
import type { RecurringScheduleSwap } from '../../core/ports/index.js';
import type { RecurringScheduleRecord } from '../../core/schedule/model.js';
import { swapChangesDefinition } from '../../core/schedule/swap.js';

/** The version of a store that has never written a schedule. */
export const FIRST_SCHEDULES_VERSION = '0';

export class SchedulesVersion {
  private changes = 0;

  /** After putSchedule / putSchedules of `count` records. */
  put(count: number): void {
    if (count > 0) this.changes++;
  }

  /** After putNewSchedules: each null answer is a schedule it created. */
  putNew(answers: readonly (RecurringScheduleRecord | null)[]): void {
    if (answers.includes(null)) this.changes++;
  }

  /** After deleteSchedule; hands `deleted` back. */
  delete(deleted: boolean): boolean {
    if (deleted) this.changes++;
    return deleted;
  }

  /** After one swap; hands `swapped` back. */
  swap(swap: RecurringScheduleSwap, swapped: boolean): boolean {
    if (swapped && swapChangesDefinition(swap)) this.changes++;
    return swapped;
  }

  /**
   * The token schedulesVersion answers. A write rolled back after its bump leaves the bump,
   * which costs a reader one needless re-read, never a missed change.
   */
  read(): string {
    return this.changes === 0 ? FIRST_SCHEDULES_VERSION : String(this.changes);
  }
}
