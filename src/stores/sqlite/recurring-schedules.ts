/**
 * The SQLite store's recurring schedules: a row per schedule holding its text
 * (schedule-codec.ts), written through the group commit as push subscriptions are. A swap
 * is an UPDATE that matches the expected text, so it is a compare-and-swap on the whole
 * record. schedulesVersion is a counter in this process (shared/schedules-version.ts):
 * only one process opens a database file (lock.ts), so every schedule write passes here.
 */
import type { RecurringScheduleSwap } from '../../core/ports/index.js';
import type { RecurringScheduleRecord } from '../../core/schedule/model.js';
import type { StoredRecordReader } from '../decode-or-warn.js';
import { byId, encodeSchedule } from '../schedule-codec.js';
import type { SchedulePart } from '../shared/record-roles.js';
import { SchedulesVersion } from '../shared/schedules-version.js';
import type { SubmitWrite } from './group-commit.js';
import type { Statements } from './statements.js';

type ScheduleRow = readonly [id: string, text: string, updatedAt: number];

export class SqliteSchedules implements SchedulePart {
  private readonly version = new SchedulesVersion();

  constructor(
    private readonly sql: Statements,
    private readonly write: SubmitWrite,
    private readonly reader: StoredRecordReader,
  ) {}

  putAll(records: readonly RecurringScheduleRecord[]): Promise<void> {
    const rows = records.map(rowOf);
    return this.write(
      rows.length,
      () => {
        for (const row of rows) this.sql.putSchedule.run(...row);
        this.version.put(rows.length);
      },
      rows.length === 1,
    );
  }

  putNew(records: readonly RecurringScheduleRecord[]): Promise<(RecurringScheduleRecord | null)[]> {
    const rows = records.map(rowOf);
    return this.write(rows.length, () => {
      const answers = rows.map((row): RecurringScheduleRecord | null => {
        if (this.sql.putNewSchedule.run(...row).changes > 0) return null;
        const existing = this.getOne(row[0]);
        if (existing !== null) return existing;
        // Stored but unreadable, which reads as no schedule: set again, as an upsert would.
        this.sql.putSchedule.run(...row);
        return null;
      });
      this.version.putNew(answers);
      return answers;
    });
  }

  get(ids: readonly string[]): (RecurringScheduleRecord | null)[] {
    return ids.map((id) => this.getOne(id));
  }

  private getOne(id: string): RecurringScheduleRecord | null {
    const json = this.sql.getSchedule.get(id);
    return json === undefined ? null : this.reader.schedule(id, json);
  }

  list(): RecurringScheduleRecord[] {
    return this.reader.schedules(this.sql.listSchedules.all()).sort(byId);
  }

  delete(id: string): Promise<boolean> {
    return this.write(1, () => this.version.delete(this.sql.deleteSchedule.run(id).changes > 0), true);
  }

  swapAll(swaps: readonly RecurringScheduleSwap[]): Promise<boolean[]> {
    const texts = swaps.map((s) => [encodeSchedule(s.next), s.next.updatedAt, s.expected.id, encodeSchedule(s.expected)] as const);
    return this.write(swaps.length, () => texts.map((args, i) => this.version.swap(swaps[i]!, this.sql.swapSchedule.run(...args).changes > 0)), true);
  }

  /** Bumped inside the write's transaction (SchedulesVersion.read says what a rollback costs). */
  versionToken(): string {
    return this.version.read();
  }
}

function rowOf(record: RecurringScheduleRecord): ScheduleRow {
  return [record.id, encodeSchedule(record), record.updatedAt];
}
