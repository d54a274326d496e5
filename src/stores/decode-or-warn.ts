/**
 * Reading a stored record that may be unreadable (written by another version, or damaged):
 * it is skipped with a warning, not thrown, so one bad record does not stop the loops that
 * read them all (the pusher's subscriptions, the schedule loop). Every store reads its
 * push subscriptions and schedules through this.
 */
import type { Logger } from '../core/ports/index.js';

export type StoredKind = 'push subscription' | 'schedule';

/** `decoded`, or null with a warning naming the store and the record. */
export function decodedOrWarn<T>(decoded: T | null, kind: StoredKind, store: string, where: Readonly<Record<string, unknown>>, logger: Logger): T | null {
  if (decoded === null) logger.warn({ store, ...where }, `${store.split(':')[0] ?? store}: a stored ${kind} is unreadable; ignored until it is set again`);
  return decoded;
}
