/**
 * Reading a stored record that may be unreadable (written by another version, or damaged):
 * it is skipped with a warning, not thrown, so one bad record does not stop the loops that
 * read them all (the pusher's subscriptions, the schedule loop). Every store reads its
 * push subscriptions and schedules through this.
 */
import type { Logger } from '../core/ports/index.js';
import type { PushSubscription } from '../core/push.js';
import type { RecurringScheduleRecord } from '../core/schedule/model.js';
import { byTopic, decodePushSubscription } from './push-subscription-codec.js';
import { decodeSchedule } from './schedule-codec.js';

export type StoredKind = 'push subscription' | 'schedule';

/** `decoded`, or null with a warning naming the store and the record. */
export function decodedOrWarn<T>(decoded: T | null, kind: StoredKind, store: string, where: Readonly<Record<string, unknown>>, logger: Logger): T | null {
  if (decoded === null) logger.warn({ store, ...where }, `${store.split(':')[0] ?? store}: a stored ${kind} is unreadable; ignored until it is set again`);
  return decoded;
}

/**
 * The reads of one store's push subscriptions and schedules from their stored texts, each
 * unreadable one skipped with a warning (decodedOrWarn), lists in the port's order.
 */
export class StoredRecordReader {
  constructor(
    private readonly store: string,
    private readonly logger: Logger,
    /** What the warning names besides the record (a SQLite store's path). */
    private readonly where: Readonly<Record<string, unknown>> = {},
  ) {}

  pushSubscription(topic: string, text: string): PushSubscription | null {
    return decodedOrWarn(decodePushSubscription(topic, text), 'push subscription', this.store, { ...this.where, topic }, this.logger);
  }

  /** `entries`: [topic, text] pairs. */
  pushSubscriptions(entries: Iterable<readonly [string, string]>): PushSubscription[] {
    return this.readable(entries, (topic, text) => this.pushSubscription(topic, text)).sort(byTopic);
  }

  schedule(id: string, text: string): RecurringScheduleRecord | null {
    return decodedOrWarn(decodeSchedule(id, text), 'schedule', this.store, { ...this.where, id }, this.logger);
  }

  /** `texts[i]` stored for `ids[i]`, or null / undefined for none. */
  schedulesOf(ids: readonly string[], texts: readonly (string | null | undefined)[]): (RecurringScheduleRecord | null)[] {
    return ids.map((id, i) => {
      const text = texts[i];
      return text === null || text === undefined ? null : this.schedule(id, text);
    });
  }

  /** `entries`: [id, text] pairs; not sorted (a paged read merges first). */
  schedules(entries: Iterable<readonly [string, string]>): RecurringScheduleRecord[] {
    return this.readable(entries, (id, text) => this.schedule(id, text));
  }

  private readable<T>(entries: Iterable<readonly [string, string]>, decode: (key: string, text: string) => T | null): T[] {
    const out: T[] = [];
    for (const [key, text] of entries) {
      const record = decode(key, text);
      if (record !== null) out.push(record);
    }
    return out;
  }
}
