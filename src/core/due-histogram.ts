/** The grains of due-time histograms, shared by the stores that count them. */
import type { DueHistogramQuery } from './ports/index.js';

/** Due-time histograms are asked in whole minutes: the memory store counts per minute. */
export const DUE_HISTOGRAM_GRAIN_MS = 60_000;

/** The grain at which SQLite and Redis count their parked (far-future) tasks (ADR 0032). */
export const PARKED_COUNT_GRAIN_MS = 3_600_000;

/** Whether the query's buckets are whole hours from a whole hour to a whole hour: the parked counts then answer exactly. */
export function inWholeHours({ from, to, bucketMs }: DueHistogramQuery): boolean {
  return bucketMs % PARKED_COUNT_GRAIN_MS === 0 && from % PARKED_COUNT_GRAIN_MS === 0 && to % PARKED_COUNT_GRAIN_MS === 0;
}
