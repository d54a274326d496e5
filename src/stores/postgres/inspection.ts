/**
 * The reads: the scheduler's feed (loadDue, a range scan of tasks_due), get, list, stats
 * (the counter rows, never a count over tasks) and the due-time histogram (a range of
 * tasks_due, grouped by bucket).
 */
import { cutPageAsync } from '../../core/task/list-page.js';
import type { DueCursor, DueHistogram, DueHistogramQuery, ListFilter, StoreStats } from '../../core/ports/index.js';
import { statsOfCounters } from '../../core/task/counter-deltas.js';
import type { TaskRecord, TaskState, TimerRef } from '../../core/task/model.js';
import type { PgContext } from './context.js';
import { dueRef, toRecord, type DueRow, type TaskRow } from './rows.js';

/** A bound no time reaches: `until` may be Infinity, which a bigint parameter cannot hold. */
const NO_BOUND = Number.MAX_SAFE_INTEGER;

/**
 * `owned`: the shards this process holds (the others' timers are their owners'), or null
 * for every shard. The scan is the same range of tasks_due either way; rows of other shards
 * are passed over.
 */
export async function loadDue(pg: PgContext, until: number, after: DueCursor | null, limit: number, owned: readonly number[] | null): Promise<TimerRef[]> {
  const bound = Math.min(until, NO_BOUND);
  const rows = await pg.query<DueRow>(
    pg.sql('load-due'),
    [bound, after?.dueAt ?? null, after?.seq ?? null, limit, owned === null || owned.length === pg.shards ? null : owned],
  );
  return rows.map(dueRef);
}

/** Reservations of `shards` that ran out before `until`: their consumers' processes did not expire them. */
export async function overdueReservations(pg: PgContext, shards: readonly number[], until: number, limit: number): Promise<TimerRef[]> {
  const rows = await pg.query<DueRow>(pg.sql('overdue-reservations'), [until, shards, limit]);
  return rows.map(dueRef);
}

export async function getTask(pg: PgContext, id: string): Promise<TaskRecord | null> {
  const rows = await pg.query<TaskRow>(pg.sql('get'), [id]);
  return rows[0] === undefined ? null : toRecord(rows[0]);
}

/** Rows a listing with a byte bound reads at a time: its memory is one such chunk past the bound. */
const LIST_CHUNK = 100;

/**
 * Walks the id index; dead letters through their partial index (the literal 'dead' matches
 * its predicate). With a byte bound (maxSize), a chunk of LIST_CHUNK rows at a time, each
 * after the last id read, until the page is cut (core/task/list-page.ts).
 */
export async function listTasks(pg: PgContext, filter: ListFilter): Promise<TaskRecord[]> {
  const topic = filter.topic ?? null;
  const read = async (after: string, limit: number): Promise<TaskRecord[]> =>
    (filter.state === 'dead'
      ? await pg.query<TaskRow>(pg.sql('list-dead'), [after, topic, limit])
      : await pg.query<TaskRow>(pg.sql('list'), [after, topic, filter.state ?? null, limit])
    ).map(toRecord);
  if (filter.maxSize === undefined) return read(filter.afterId ?? '', filter.limit);
  async function* chunks(): AsyncGenerator<TaskRecord> {
    let after = filter.afterId ?? '';
    for (let left = filter.limit; left > 0; ) {
      const chunk = await read(after, Math.min(LIST_CHUNK, left));
      yield* chunk;
      if (chunk.length < Math.min(LIST_CHUNK, left)) return;
      left -= chunk.length;
      after = chunk.at(-1)!.id;
    }
  }
  return cutPageAsync(chunks(), filter.limit, filter.maxSize);
}

export async function taskStats(pg: PgContext): Promise<StoreStats> {
  const rows = await pg.query<{ topic: string; state: TaskState; n: number }>(pg.sql('stats'), []);
  return statsOfCounters(rows);
}

/** Every pending task is in tasks_due, so the counts cover the whole range. */
export async function dueHistogram(pg: PgContext, query: DueHistogramQuery): Promise<DueHistogram> {
  const { from, to, bucketMs, topic } = query;
  const counts = new Array<number>(Math.ceil((to - from) / bucketMs)).fill(0);
  const rows = await pg.query<{ b: number; n: number }>(
    pg.sql('due-histogram'),
    [from, bucketMs, Math.min(to, NO_BOUND), topic ?? null],
  );
  for (const { b, n } of rows) counts[b] = n;
  return { counts, coveredUntil: to };
}
