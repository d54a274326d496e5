/**
 * One page of a listing of schedules (GET /v1/schedules, `schedules.listPage`), cut from the
 * schedules in id order, the order every store's listSchedules answers in: those with an id
 * after `afterId`, at most `limit` of them, and fewer when their payloads pass `budget`
 * characters (a page ends after the schedule that passes it, so it is never empty while
 * schedules remain). `next` is the id to pass as `afterId` for the following page, or null
 * when this page ends the listing.
 *
 * Example, ids a b c d: {afterId: null, limit: 2} -> [a, b], next 'b'; {afterId: 'b',
 * limit: 2} -> [c, d], next null; {afterId: 'bb', limit: 9} -> [c, d], next null (an id
 * deleted between two pages still places the cursor).
 */
import { SCHEDULE_PAGE_PAYLOAD_BUDGET } from './model.js';
import type { SchedulePageQuery } from './validate.js';

export interface SchedulePage<T> {
  readonly items: T[];
  readonly next: string | null;
}

export function schedulePage<T extends { readonly id: string; readonly payload: string }>(
  sorted: readonly T[],
  query: SchedulePageQuery,
  budget = SCHEDULE_PAGE_PAYLOAD_BUDGET,
): SchedulePage<T> {
  const start = query.afterId === null ? 0 : firstAfter(sorted, query.afterId);
  const items: T[] = [];
  let spent = 0;
  let i = start;
  while (i < sorted.length && items.length < query.limit && spent <= budget) {
    const item = sorted[i++]!;
    items.push(item);
    spent += item.payload.length;
  }
  return { items, next: i < sorted.length ? (items.at(-1)?.id ?? null) : null };
}

/** The index of the first id greater than `id` (binary search; ids compare as JavaScript strings). */
function firstAfter(sorted: readonly { readonly id: string }[], id: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]!.id <= id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
