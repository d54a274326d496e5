/**
 * A listing's byte bound (GET /v1/tasks, `q.listPage`): a page holds at most `limit` tasks,
 * and ends after the task that takes it past TASK_PAGE_SIZE characters of tasks as
 * `listedSize` counts them, so it is never empty while tasks remain and never larger than
 * the budget plus one task. Without it, 10,000 tasks of 1 MiB payloads made a 10 GiB answer.
 *
 * Every store cuts its `list` there when given `maxSize` (ListFilter), reading no further
 * than it needs; the engine cuts again with the same function (a store written elsewhere
 * may not), so the rule is the same on every store:
 *
 *   budget 4 MiB, tasks of 1.5 MiB: a page of 3 (4.5 MiB: the third passed the budget), next = its id
 *   budget 4 MiB, tasks of 1 KiB, limit 100: a page of 100, next = the 100th id
 */
import type { TaskRecord } from './model.js';

/** Characters of tasks a page holds before it ends (the one that passes it included). */
export const TASK_PAGE_SIZE = 4 * 1024 * 1024;

/** The fixed fields of a listed task (ids aside) and of an attempt entry, as JSON, rounded up. */
const TASK_FIXED = 320;
const ATTEMPT_FIXED = 96;

/**
 * About the characters `record` takes in a listing's JSON: its payload, id, topic, last
 * error, url and attempt errors, plus the fixed fields. The same number on every store.
 */
export function listedSize(record: TaskRecord): number {
  let size = TASK_FIXED + record.payload.length + record.id.length + record.topic.length + (record.lastError?.length ?? 0) + (record.url?.length ?? 0);
  for (const entry of record.history) size += ATTEMPT_FIXED + (entry.error?.length ?? 0);
  return size;
}

/**
 * The listing's page from `records` (in id order): the first ones, at most `limit`, ending
 * after the one that takes the page past `maxSize` (none: no byte bound). Reads `records`
 * no further than the page, so a store can hand it a cursor.
 */
export function cutPage(records: Iterable<TaskRecord>, limit: number, maxSize?: number): TaskRecord[] {
  const page: TaskRecord[] = [];
  let size = 0;
  if (limit <= 0) return page;
  for (const record of records) {
    page.push(record);
    size += listedSize(record);
    if (page.length >= limit || (maxSize !== undefined && size > maxSize)) break;
  }
  return page;
}

/** Whether a page `cutPage` made may have more after it: it is full, or it passed `maxSize`. */
export function pageMayContinue(page: readonly TaskRecord[], limit: number, maxSize?: number): boolean {
  if (page.length === 0) return false;
  if (page.length >= limit) return true;
  return maxSize !== undefined && page.reduce((sum, record) => sum + listedSize(record), 0) > maxSize;
}

/** `cutPage` of records that come a chunk at a time (a store reading by id ranges); stops reading once the page is cut. */
export async function cutPageAsync(records: AsyncIterable<TaskRecord>, limit: number, maxSize?: number): Promise<TaskRecord[]> {
  const page: TaskRecord[] = [];
  let size = 0;
  if (limit <= 0) return page;
  for await (const record of records) {
    page.push(record);
    size += listedSize(record);
    if (page.length >= limit || (maxSize !== undefined && size > maxSize)) break;
  }
  return page;
}

/** `items` through `map`, lazily: a store's rows as records, decoded only as far as a page reads. */
export function* mapLazily<A, B>(items: Iterable<A>, map: (item: A) => B): Generator<B> {
  for (const item of items) yield map(item);
}
