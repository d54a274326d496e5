/**
 * The Redis store's recurring schedules: fields of one hash (keys.ts `schedules`) in the
 * meta slot, beside the schedulesVersion counter. Every write is a script that bumps the
 * counter with it (lua/schedule-*.lua, ADR 0033): no reader sees a write without its bump,
 * and under waitReplicas the scripts wait for the replicas like every task write.
 */
import type { RecurringScheduleSwap } from '../../core/ports/index.js';
import type { RecurringScheduleRecord } from '../../core/schedule/model.js';
import { swapChangesDefinition } from '../../core/schedule/swap.js';
import type { StoredRecordReader } from '../decode-or-warn.js';
import { byId, encodeSchedule } from '../schedule-codec.js';
import type { SchedulePart } from '../shared/record-roles.js';
import { FIRST_SCHEDULES_VERSION } from '../shared/schedules-version.js';
import { deleteScheduleScript, putNewSchedulesScript, putSchedulesScript, swapScheduleScript } from './schedule-commands.js';
import type { RedisClient } from './connection.js';
import type { Keyspace } from './keys.js';
import { call } from './plain-commands.js';

/** Schedules per HSCAN page of list: one short reply to parse at a time. */
const SCHEDULE_SCAN_COUNT = 500;

export class RedisSchedules implements SchedulePart {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keyspace,
    private readonly reader: StoredRecordReader,
  ) {}

  async putAll(records: readonly RecurringScheduleRecord[]): Promise<void> {
    if (records.length === 0) return;
    await call(() => putSchedulesScript(this.client, this.keys, records.map(textOf)));
  }

  async putNew(records: readonly RecurringScheduleRecord[]): Promise<(RecurringScheduleRecord | null)[]> {
    if (records.length === 0) return [];
    const texts = await call(() => putNewSchedulesScript(this.client, this.keys, records.map(textOf)));
    const answers = this.reader.schedulesOf(
      records.map((r) => r.id),
      texts.map((text) => (text === '' ? null : text)),
    );
    // Stored but unreadable, which reads as no schedule: set again, as an upsert would.
    const unreadable = records.filter((_, i) => texts[i] !== '' && answers[i] === null);
    if (unreadable.length > 0) await this.putAll(unreadable);
    return answers;
  }

  async get(ids: readonly string[]): Promise<(RecurringScheduleRecord | null)[]> {
    if (ids.length === 0) return [];
    return this.reader.schedulesOf(ids, await call(() => this.client.hmget(this.keys.schedules, ...ids)));
  }

  async list(): Promise<RecurringScheduleRecord[]> {
    // HSCAN in pages, each decoded as it comes, not one HGETALL: a reply of 10,000 schedules
    // (~3 MB) was parsed and decoded in one go, holding the event loop ~100 ms while
    // deliveries were due (ADR 0031). A field present throughout the scan is returned, maybe
    // twice: the Map keeps one.
    const schedules = new Map<string, RecurringScheduleRecord>();
    let cursor = '0';
    do {
      const [next, flat] = await call(() => this.client.hscan(this.keys.schedules, cursor, 'COUNT', SCHEDULE_SCAN_COUNT));
      const page: Array<readonly [string, string]> = [];
      for (let i = 0; i < flat.length; i += 2) page.push([flat[i]!, flat[i + 1]!]);
      for (const schedule of this.reader.schedules(page)) schedules.set(schedule.id, schedule);
      cursor = next;
    } while (cursor !== '0');
    return [...schedules.values()].sort(byId);
  }

  delete(id: string): Promise<boolean> {
    return call(() => deleteScheduleScript(this.client, this.keys, id));
  }

  async swapAll(swaps: readonly RecurringScheduleSwap[]): Promise<boolean[]> {
    const text = (s: RecurringScheduleSwap) => [s.expected.id, encodeSchedule(s.expected), encodeSchedule(s.next)] as const;
    // The loop's moves (almost every swap) and definition changes go in separate calls:
    // only the latter bump the version, and a call holds one kind.
    const changes = swaps.map(swapChangesDefinition);
    if (!changes.includes(true)) return swapScheduleScript(this.client, this.keys, false, swaps.map(text));
    if (!changes.includes(false)) return swapScheduleScript(this.client, this.keys, true, swaps.map(text));
    const moved = await swapScheduleScript(this.client, this.keys, false, swaps.filter((_, i) => !changes[i]).map(text));
    const changed = await swapScheduleScript(this.client, this.keys, true, swaps.filter((_, i) => changes[i]).map(text));
    return changes.map((change) => (change ? changed.shift() : moved.shift()) === true);
  }

  async versionToken(): Promise<string> {
    return (await call(() => this.client.get(this.keys.schedulesVersion))) ?? FIRST_SCHEDULES_VERSION;
  }
}

function textOf(record: RecurringScheduleRecord): readonly [string, string] {
  return [record.id, encodeSchedule(record)];
}
