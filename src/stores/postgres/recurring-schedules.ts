/**
 * The PostgreSQL store's recurring schedules: a row per schedule holding its text
 * (schedule-codec.ts). A swap is an UPDATE that matches the expected text: a
 * compare-and-swap on the whole record. schedulesVersion is a counter in `meta`, bumped in
 * the transaction of each write by the rules of ADR 0033 (shared/schedules-version.ts):
 * several processes may write one schema, so it lives in the database, not in a process.
 */
import type { RecurringScheduleSwap } from '../../core/ports/index.js';
import type { RecurringScheduleRecord } from '../../core/schedule/model.js';
import { swapChangesDefinition } from '../../core/schedule/swap.js';
import type { StoredRecordReader } from '../decode-or-warn.js';
import { byId, encodeSchedule } from '../schedule-codec.js';
import type { SchedulePart } from '../shared/record-roles.js';
import { FIRST_SCHEDULES_VERSION } from '../shared/schedules-version.js';
import type { Queryable } from './connection.js';
import type { PgContext } from './context.js';

export class PgSchedules implements SchedulePart {
  constructor(
    private readonly pg: PgContext,
    private readonly reader: StoredRecordReader,
  ) {}

  private bump(client: Queryable): Promise<unknown> {
    return client.query(this.pg.sql('schedules-bump'));
  }

  private upsert(client: Queryable, records: readonly RecurringScheduleRecord[]): Promise<unknown> {
    return client.query(
      this.pg.sql('schedules-put'),
      [records.map((r) => r.id), records.map(encodeSchedule), records.map((r) => r.updatedAt)],
    );
  }

  async putAll(records: readonly RecurringScheduleRecord[]): Promise<void> {
    await this.pg.transaction(async (client) => {
      await this.upsert(client, records);
      await this.bump(client);
    });
  }

  putNew(records: readonly RecurringScheduleRecord[]): Promise<(RecurringScheduleRecord | null)[]> {
    return this.pg.transaction(async (client) => {
      const created = await client.query<{ id: string }>(
        this.pg.sql('schedules-put-new'),
        [records.map((r) => r.id), records.map(encodeSchedule), records.map((r) => r.updatedAt)],
      );
      const fresh = new Set(created.rows.map((r) => r.id));
      const others = records.filter((r) => !fresh.has(r.id));
      const stored = others.length === 0 ? [] : await this.read(client, others.map((r) => r.id));
      // Stored but unreadable, which reads as no schedule: set again, as an upsert would.
      const unreadable = others.filter((_, i) => stored[i] === null);
      if (unreadable.length > 0) await this.upsert(client, unreadable);
      const answers = records.map((r) => (fresh.has(r.id) ? null : (stored[others.indexOf(r)] ?? null)));
      if (answers.includes(null)) await this.bump(client);
      return answers;
    });
  }

  get(ids: readonly string[]): Promise<(RecurringScheduleRecord | null)[]> {
    return this.read(this.pg.pool, ids).catch((error: unknown) => {
      throw this.pg.failure(error);
    });
  }

  private async read(client: Queryable, ids: readonly string[]): Promise<(RecurringScheduleRecord | null)[]> {
    const { rows } = await client.query<{ id: string; schedule: string }>(this.pg.sql('schedules-read'), [ids]);
    const texts = new Map(rows.map((r) => [r.id, r.schedule]));
    return this.reader.schedulesOf(ids, ids.map((id) => texts.get(id)));
  }

  async list(): Promise<RecurringScheduleRecord[]> {
    const rows = await this.pg.query<{ id: string; schedule: string }>(this.pg.sql('schedules-list'), []);
    return this.reader.schedules(rows.map((r) => [r.id, r.schedule] as const)).sort(byId);
  }

  delete(id: string): Promise<boolean> {
    return this.pg.transaction(async (client) => {
      const { rowCount } = await client.query(this.pg.sql('schedules-delete'), [id]);
      if (rowCount === 0) return false;
      await this.bump(client);
      return true;
    });
  }

  swapAll(swaps: readonly RecurringScheduleSwap[]): Promise<boolean[]> {
    return this.pg.transaction(async (client) => {
      const { rows } = await client.query<{ id: string }>(
        this.pg.sql('schedules-swap'),
        [swaps.map((s) => s.expected.id), swaps.map((s) => encodeSchedule(s.expected)), swaps.map((s) => encodeSchedule(s.next)), swaps.map((s) => s.next.updatedAt)],
      );
      const swapped = new Set(rows.map((r) => r.id));
      const answers = swaps.map((s) => swapped.has(s.expected.id));
      if (swaps.some((s, i) => answers[i] === true && swapChangesDefinition(s))) await this.bump(client);
      return answers;
    });
  }

  async versionToken(): Promise<string> {
    const rows = await this.pg.query<{ value: string }>(this.pg.sql('schedules-version'), []);
    const value = rows[0]?.value ?? '0';
    return value === '0' ? FIRST_SCHEDULES_VERSION : value;
  }
}
