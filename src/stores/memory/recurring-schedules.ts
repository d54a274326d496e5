/**
 * The memory store's recurring schedules. Each is kept with its text (schedule-codec.ts),
 * which a swap compares as the durable stores compare theirs, so a swap refused there is
 * refused here too; records go in and out as copies, so a caller's later change of its
 * object changes nothing stored.
 */
import type { RecurringScheduleSwap } from '../../core/ports/index.js';
import type { RecurringScheduleRecord } from '../../core/schedule/model.js';
import { byId, encodeSchedule } from '../schedule-codec.js';
import type { SchedulePart } from '../shared/record-roles.js';
import { SchedulesVersion } from '../shared/schedules-version.js';

export class MemorySchedules implements SchedulePart {
  private readonly byId = new Map<string, { record: RecurringScheduleRecord; text: string }>();
  private readonly version = new SchedulesVersion();

  putAll(records: readonly RecurringScheduleRecord[]): void {
    for (const record of records) this.set(record);
    this.version.put(records.length);
  }

  putNew(records: readonly RecurringScheduleRecord[]): (RecurringScheduleRecord | null)[] {
    const answers = records.map((record) => {
      const stored = this.getOne(record.id);
      if (stored === null) this.set(record);
      return stored;
    });
    this.version.putNew(answers);
    return answers;
  }

  get(ids: readonly string[]): (RecurringScheduleRecord | null)[] {
    return ids.map((id) => this.getOne(id));
  }

  list(): RecurringScheduleRecord[] {
    return [...this.byId.values()].map((e) => ({ ...e.record })).sort(byId);
  }

  delete(id: string): boolean {
    return this.version.delete(this.byId.delete(id));
  }

  swapAll(swaps: readonly RecurringScheduleSwap[]): boolean[] {
    return swaps.map((swap) => this.swap(swap));
  }

  private swap(swap: RecurringScheduleSwap): boolean {
    const entry = this.byId.get(swap.expected.id);
    const swapped = entry !== undefined && entry.text === encodeSchedule(swap.expected);
    if (swapped) this.set(swap.next);
    return this.version.swap(swap, swapped);
  }

  versionToken(): string {
    return this.version.read();
  }

  private getOne(id: string): RecurringScheduleRecord | null {
    const entry = this.byId.get(id);
    return entry === undefined ? null : { ...entry.record };
  }

  private set(record: RecurringScheduleRecord): void {
    this.byId.set(record.id, { record: { ...record }, text: encodeSchedule(record) });
  }
}
