/**
 * The SQLite store's dueHistogram: a range of the index tasks_due, grouped by bucket. It
 * reads the index entries in the range (and each one's row, for its state and topic), never
 * the rest of the table. Parked tasks (due beyond the parking frontier, ~18.6 to 37 h ahead)
 * are not in that index but are counted per hour of runAt in parked_days (0009): buckets of
 * whole hours, from and to on the hour, count them too and cover the whole range; finer
 * buckets are complete below the frontier.
 */
import { inWholeHours, PARKED_COUNT_GRAIN_MS } from '../../core/due-histogram.js';
import type { DueHistogram, DueHistogramQuery } from '../../core/ports/index.js';
import type { Parking } from './parking.js';
import type { Statements } from './statements.js';

export function sqliteDueHistogram(sql: Statements, parking: Parking, query: DueHistogramQuery): DueHistogram {
  const { from, to, bucketMs, topic } = query;
  const counts = new Array<number>(Math.ceil((to - from) / bucketMs)).fill(0);
  const rows = topic === undefined ? sql.dueBuckets.all(from, bucketMs, from, to) : sql.dueBucketsOfTopic.all(from, bucketMs, from, to, topic);
  for (const { b, n } of rows) counts[b] = n;
  const indexedUntil = Math.min(to, Math.max(from, parking.indexedUntil()));
  if (!inWholeHours(query)) return { counts, coveredUntil: indexedUntil };
  const [firstHour, endHour] = [from / PARKED_COUNT_GRAIN_MS, to / PARKED_COUNT_GRAIN_MS];
  const [firstDay, endDay] = [Math.floor(firstHour / 24), Math.ceil(endHour / 24)];
  const days = topic === undefined ? sql.parkedDays.all(firstDay, endDay) : sql.parkedDaysOfTopic.all(firstDay, endDay, topic);
  for (const row of days) {
    const day = row[0]!;
    for (let h = 0; h < 24; h++) {
      const hour = day * 24 + h;
      if (row[h + 1] !== 0 && hour >= firstHour && hour < endHour) counts[Math.floor(((hour - firstHour) * PARKED_COUNT_GRAIN_MS) / bucketMs)]! += row[h + 1]!;
    }
  }
  return { counts, coveredUntil: to };
}
