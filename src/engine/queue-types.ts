/** The types of DelayQueue's options, calls and answers (the library's public API). */
import type { TopicLimits } from '../core/flow/limits.js';
import type { SqlTransaction } from '../core/ports/index.js';
import type { EngineTuningInput } from '../core/options.js';
import type { QueueObserver } from '../core/observer.js';
import type { Clock, Logger, StoreStats, UnavailablePartition } from '../core/ports/index.js';
import type { PushPorts } from '../core/push.js';
import type { TaskInfo, TaskState } from '../core/task/model.js';
import type { Limits, TaskDefaults } from '../core/task/validate.js';
import type { TimeInput } from '../core/time.js';
import type { LatenessSummary } from './dispatch/lateness.js';
import type { PushStats } from './push/push-stats.js';

/**
 * The engine's options: its ports (clock, logger, randomness), the limits and task
 * defaults, and its tuning (core/options.ts: tickMs, retentionMs, purgeIntervalMs,
 * purgeBatch, storeRetryMs, pushSyncMs, pushBreaker, pushMaxInFlight, loader), each checked when the queue starts (INVALID_OPTION).
 */
export interface EngineOptions extends EngineTuningInput {
  /** Injected time; tests pass a ManualClock. Default: the system clock. */
  clock?: Clock;
  limits?: Partial<Limits>;
  /** Defaults for tasks that do not say: ttrMs 30 s, maxAttempts 5, backoff 1 s x2 up to 1 h. */
  defaults?: Partial<TaskDefaults>;
  logger?: Logger;
  /** Randomness for backoff jitter; tests pass a fixed one. */
  random?: () => number;
  /**
   * Push delivery's ports (docs/push.md): the HTTP transport and the signer. Without them
   * the queue pushes nothing and `setPush` is refused; close() closes the transport.
   */
  push?: PushPorts;
  /**
   * The default push secret (`whsec_...`): signs the pushes of tasks scheduled with their
   * own `url` on a topic that has no push subscription. Without it such a task is refused
   * (PUSH_NO_SECRET) unless its topic has a subscription. docs/push.md, "Per-task url".
   */
  pushSecret?: string;
  /** Told of every task scheduled, delivered and settled (metrics: src/metrics). Default: none. */
  observer?: QueueObserver;
  /**
   * Lifecycle events (docs/library.md, "Lifecycle events"): written to the store's event log
   * (Redis, PostgreSQL; an in-memory ring for memory and SQLite) and read with
   * `queue.events()`. Default false: nothing is written, and `events()` throws INVALID_OPTION.
   */
  events?: boolean;
}

export interface ScheduleResult {
  readonly id: string;
  readonly runAt: number;
  /** false when a task with this id already existed (the call changed nothing). */
  readonly created: boolean;
}

export interface ReserveOptions {
  /** Most tasks to reserve. Default 1, at most 1,000. */
  max?: number;
  /** Wait up to this long for a task to fall due. Default 0 (answer at once), at most 60 s. */
  waitMs?: number;
  /** Reservation length; default each task's ttrMs. */
  ttrMs?: number;
  signal?: AbortSignal;
}

export interface NackOptions {
  /** Retry after this delay instead of the task's backoff. */
  delayMs?: number;
  /** Recorded as the task's lastError. */
  error?: string;
}

export interface ExtendOptions {
  /** The reservation runs this long from now (1 ms .. limits.maxTtrMs); default: the task's own ttrMs. */
  ttrMs?: number;
}

export interface ExtendResult {
  /** When the reservation now runs out (epoch ms). */
  readonly reservedUntil: number;
}

/** Asks `cancel` and `reschedule` for their detailed outcome instead of a boolean. */
export interface OutcomeOption {
  readonly outcome: true;
}

/**
 * Scheduling or cancelling inside a transaction of the caller's, on a store that offers it
 * (PostgreSQL; docs/postgres.md, "Transactional scheduling"): a node-postgres client holding
 * an open transaction on the store's database (anything with `query(text, values)`). The
 * change exists if and only if that transaction commits; delayq never commits, rolls back
 * or releases it.
 */
export interface TransactionOption {
  readonly tx: SqlTransaction;
}

export type RescheduleResult =
  | { readonly status: 'rescheduled'; readonly runAt: number }
  | { readonly status: 'not_found' | 'not_pending' };

export type NackResult = { readonly state: 'pending'; readonly runAt: number } | { readonly state: 'dead' };

export interface ListOptions {
  topic?: string;
  state?: TaskState;
  limit?: number;
  afterId?: string;
}

/** One page of `listPage`: pass `next` as `afterId` for the following one (null: the listing ended). */
export interface TaskPage<P = unknown> {
  readonly tasks: TaskInfo<P>[];
  readonly next: string | null;
}

export interface QueueStats {
  readonly store: string;
  readonly counts: StoreStats['byState'];
  readonly topics: StoreStats['byTopic'];
  /**
   * The partitions (shards) of a shared store that cannot take writes now, since when and
   * why, as this process found them; empty when all can (and always, on a store one process owns).
   */
  readonly unavailable: readonly UnavailablePartition[];
  /** Timers in the wheel (pending tasks within the horizon and reservations). */
  readonly timers: number;
  /** Due tasks waiting for a consumer, by topic. */
  readonly ready: Readonly<Record<string, number>>;
  /**
   * The runAt of each topic's longest-waiting ready task in this process (a hint: it may have
   * been cancelled since); empty on Redis, whose ready lists are shared in the store.
   */
  readonly oldestReady: Readonly<Record<string, number>>;
  /** Reserve long-polls waiting now. */
  readonly waiting: number;
  /** The paused topics as this process holds them, in ascending order (q.topics.pause). */
  readonly paused: readonly string[];
  /** The limited topics' flow limits as this process holds them (q.topics.setLimits). */
  readonly limits: Readonly<Record<string, TopicLimits>>;
  /** Per topic: how many times a delivery waited for the topic's limits, since this process started. */
  readonly throttled: Readonly<Record<string, number>>;
  /** How late deliveries were (delivered at - runAt), in ms. */
  readonly lateness: LatenessSummary;
  /** Push counters per topic and destination origin, with each origin's circuit breaker; absent when the queue does not push. */
  readonly push?: PushStats;
}

export interface DueHistogramOptions {
  /** Default now; rounded down to its minute. */
  from?: TimeInput;
  /** Default 60 buckets after from. */
  to?: TimeInput;
  /** A whole number of minutes; default one minute. */
  bucketMs?: number;
  topic?: string;
}

/** Pending tasks falling due per bucket: counts[i] covers [from + i * bucketMs, from + (i + 1) * bucketMs). */
export interface DueHistogramResult {
  readonly from: number;
  readonly to: number;
  readonly bucketMs: number;
  readonly topic: string | null;
  readonly counts: readonly number[];
  /** Complete for runAt < coveredUntil; beyond it the store's time index may not hold every task (docs/dashboard.md). */
  readonly coveredUntil: number;
}
