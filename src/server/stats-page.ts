/**
 * GET /v1/stats answers its per-topic parts a page of topics at a time: with 10,000 topics
 * the whole answer was 262 KB, and it grows with every topic a producer invents. The
 * topics are those of any per-topic part (`topics`, `ready`, `oldestReady`, `push.topics`,
 * `limits`, `throttled`),
 * in name order; a page holds those after `after`, at most `topicLimit` (default 1,000, so
 * a server with fewer topics answers as before), and each per-topic part keeps only them.
 * `topicsNext` is the `after` of the next page (null on the last), `topicCount` the topics
 * in all. The totals (`counts`, `readyTotal`, `timers`, `waiting`, `lateness`) are the whole
 * queue's on every page; `push.origins` is bounded by the push counters themselves (1,000
 * origins, the rest counted together).
 *
 * Example, topics a b c: {topicLimit: 2} -> topics a b, topicsNext 'b'; {after: 'b'} -> c, null.
 *
 * GET /v1/activity pages its per-topic parts (the counters by topic, the last failed push of
 * each topic) by the same rule and the same parameters (topicPage).
 */
import { dict, own } from '../core/dict.js';
import { validateIntOption, validateTopic } from '../core/task/validate.js';
import type { QueueStats } from '../engine/queue-types.js';
import type { StatsResponse } from '../wire/types.js';

export const DEFAULT_STATS_TOPICS = 1_000;
export const MAX_STATS_TOPICS = 10_000;

export interface StatsPageQuery {
  readonly topicLimit: number;
  readonly after: string | null;
}

/** The query, checked: topicLimit 1 to MAX_STATS_TOPICS (INVALID_OPTION), after a topic (INVALID_TOPIC). */
export function validateStatsPage(query: { topicLimit?: string; after?: string }): StatsPageQuery {
  return {
    topicLimit: query.topicLimit === undefined ? DEFAULT_STATS_TOPICS : validateIntOption(Number(query.topicLimit), 'topicLimit', 1, MAX_STATS_TOPICS),
    after: query.after === undefined ? null : validateTopic(query.after),
  };
}

/** A page of topic names (the same rule for /v1/stats and /v1/activity): those after `after`, at most `topicLimit`, in name order. */
export interface TopicPage {
  readonly page: readonly string[];
  /** The `after` of the next page; null on the last. */
  readonly next: string | null;
  /** The topics in all. */
  readonly count: number;
}

export function topicPage(names: Iterable<string>, query: StatsPageQuery): TopicPage {
  const sorted = [...new Set(names)].sort();
  const start = query.after === null ? 0 : sorted.findIndex((name) => name > query.after!);
  const from = start === -1 ? sorted.length : start;
  const page = sorted.slice(from, from + query.topicLimit);
  return { page, next: from + page.length < sorted.length ? (page.at(-1) ?? null) : null, count: sorted.length };
}

export function statsPage(stats: QueueStats, query: StatsPageQuery): StatsResponse {
  const { page, next, count } = topicPage(
    [...Object.keys(stats.topics), ...Object.keys(stats.ready), ...Object.keys(stats.oldestReady), ...Object.keys(stats.push?.topics ?? {}), ...Object.keys(stats.limits), ...Object.keys(stats.throttled), ...stats.paused],
    query,
  );
  const { push, ...rest } = stats;
  return {
    ...rest,
    counts: { ...stats.counts },
    paused: [...stats.paused],
    unavailable: stats.unavailable.map((u) => ({ ...u })),
    topics: pick(stats.topics, page),
    ready: pick(stats.ready, page),
    oldestReady: pick(stats.oldestReady, page),
    limits: pick(stats.limits, page),
    throttled: pick(stats.throttled, page),
    ...(push !== undefined ? { push: { topics: pick(push.topics, page), origins: push.origins } } : {}),
    readyTotal: Object.values(stats.ready).reduce((sum, n) => sum + n, 0),
    topicsNext: next,
    topicCount: count,
  };
}

/** The entries of `record` whose keys are in `keys` (in that order). */
export function pick<V>(record: Readonly<Record<string, V>>, keys: readonly string[]): Record<string, V> {
  const out = dict<V>();
  for (const key of keys) {
    const value = own(record, key);
    if (value !== undefined) out[key] = value;
  }
  return out;
}
