/**
 * The ports: what the engine needs from the outside world, as interfaces only.
 *
 * The store port is split by role, so each caller sees only what it uses and each
 * contract is small enough to state. Every store (memory, SQLite, Redis) implements all
 * of them and must pass the conformance suite in test/conformance/ unchanged.
 *
 * Contract shared by every method:
 * - `now` is passed in; a store never reads a clock, so time-dependent behaviour is
 *   decided by the caller and testable with a manual clock.
 * - A returned promise resolves only once the change is as durable as the store
 *   promises (memory: applied; SQLite: committed; Redis: acknowledged by Redis).
 * - A change is atomic per task: a concurrent caller sees the state before or after it.
 * - Outcomes that a caller can act on ("not found", "stale receipt") are returned
 *   values; a rejected promise means the store itself failed (DelayQError with
 *   STORE_UNAVAILABLE or similar) and nothing was changed by that call.
 */
import type { PushSubscription } from './push.js';
import type { ScheduleRecord } from './schedule/model.js';
import type { ReservedTask, NewTaskRecord, TaskRecord, TaskState, TimerRef } from './task/model.js';
import type { TimerHandle } from './wheel/timer.js';

/** A clock and one-shot timers. Real: Date.now + setTimeout; tests: a manual clock. */
export interface Clock {
  now(): number;
  /** Calls `callback` once after `delayMs` (which the caller keeps <= 2^31-1). */
  setTimer(callback: () => void, delayMs: number): TimerToken;
  clearTimer(token: TimerToken): void;
}

export type TimerToken = { readonly __timer: unique symbol } | object;

export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

// ---------------------------------------------------------------------------------------
// Outcomes

export interface ScheduleOutcome {
  readonly id: string;
  readonly runAt: number;
  /** false when a task with this id already existed: nothing was changed. */
  readonly created: boolean;
  /**
   * The timer of the new pending task; null when not created. A store may also give the
   * timer of an existing task that is pending on the same topic (the Redis store does: the
   * call may repeat one whose reply was lost after it created the task, and then nothing
   * else would put its timer in a wheel); the engine places it unless it holds it already.
   */
  readonly ref: TimerRef | null;
}

export type CancelOutcome = 'cancelled' | 'not_found' | 'not_pending';

export type RescheduleOutcome =
  | { readonly status: 'rescheduled'; readonly ref: TimerRef }
  | { readonly status: 'not_found' | 'not_pending' };

export type AckOutcome = 'acked' | 'not_found' | 'stale';

/** One delivery to ack: a Delivery itself fits. */
export interface AckRequest {
  readonly id: string;
  readonly receipt: string;
  /**
   * The task's topic, when the caller holds the delivery (the engine's workers pass their
   * deliveries): a store may use it instead of reading it back. It must be the task's own
   * topic, so the engine never passes one its caller supplied.
   */
  readonly topic?: string;
}

export type NackOutcome =
  | { readonly status: 'retrying'; readonly ref: TimerRef }
  | { readonly status: 'dead' }
  | { readonly status: 'not_found' | 'stale' };

export type DeferOutcome =
  | { readonly status: 'deferred'; readonly ref: TimerRef }
  | { readonly status: 'not_found' | 'stale' };

export type RetryDeadOutcome =
  | { readonly status: 'retried'; readonly ref: TimerRef }
  | { readonly status: 'not_found' | 'not_dead' };

export type CancelDeadOutcome = 'cancelled' | 'not_found' | 'not_dead';

export interface StoreNackOptions {
  /** Retry after exactly this delay instead of the task's backoff policy. */
  readonly delayMs?: number;
  readonly error?: string;
  /** A number in [0, 1) for the backoff jitter (the store has no randomness of its own). */
  readonly random: number;
}

export interface ListFilter {
  readonly topic?: string;
  readonly state?: TaskState;
  readonly limit: number;
  /** Resume after this id (ids are listed in ascending order). */
  readonly afterId?: string;
}

export interface StoreStats {
  readonly byState: Readonly<Record<TaskState, number>>;
  readonly byTopic: Readonly<Record<string, Readonly<Partial<Record<TaskState, number>>>>>;
}

/** A due-time histogram's question: pending tasks with from <= runAt < to, in buckets of bucketMs. */
export interface DueHistogramQuery {
  readonly from: number;
  readonly to: number;
  /** A multiple of DUE_HISTOGRAM_GRAIN_MS; from is one too. */
  readonly bucketMs: number;
  readonly topic?: string;
}

/** The answer: counts[i] = pending tasks with runAt in [from + i * bucketMs, from + (i + 1) * bucketMs), capped at `to`. */
export interface DueHistogram {
  readonly counts: number[];
  /**
   * The counts are complete for runAt < coveredUntil (from <= coveredUntil <= to). A store
   * that keeps far-future tasks outside its time index (SQLite parks them), or that stops
   * reading tasks at a bound (Redis), counts only part of the range: tasks due at or after
   * coveredUntil may be missing.
   */
  readonly coveredUntil: number;
}

/** Due-time histograms are asked in whole minutes: the memory store counts per minute. */
export const DUE_HISTOGRAM_GRAIN_MS = 60_000;

/** The grain at which SQLite and Redis count their parked (far-future) tasks (ADR 0032). */
export const PARKED_COUNT_GRAIN_MS = 3_600_000;

/** Whether the query's buckets are whole hours from a whole hour to a whole hour: the parked counts then answer exactly. */
export function inWholeHours({ from, to, bucketMs }: DueHistogramQuery): boolean {
  return bucketMs % PARKED_COUNT_GRAIN_MS === 0 && from % PARKED_COUNT_GRAIN_MS === 0 && to % PARKED_COUNT_GRAIN_MS === 0;
}

export interface DueCursor {
  readonly dueAt: number;
  readonly seq: number;
}

// ---------------------------------------------------------------------------------------
// Roles

/** Producers: create, cancel and move pending tasks. */
export interface ProducerStore {
  /**
   * Creates each task that does not exist yet, in `pending` with attempts 0. An id that
   * exists (in any state) is left untouched and reported with `created: false` and its
   * current runAt. Outcomes come back in input order. Ids repeated inside one call: the
   * first wins. All tasks of one call commit together or not at all.
   */
  schedule(tasks: readonly NewTaskRecord[], now: number): Promise<ScheduleOutcome[]>;
  /** pending -> cancelled. Any other state is `not_pending`. */
  cancel(id: string, now: number): Promise<CancelOutcome>;
  /**
   * `cancel` for many ids at once, one outcome per id in input order (an id given twice is
   * cancelled by its first occurrence; the second is `not_pending`). Not atomic as a whole
   * (the Redis store is atomic per shard), but every outcome is final. A store with no
   * batch path of its own uses `cancelEachOneByOne` (core/batch-fallbacks.ts).
   */
  cancelMany(ids: readonly string[], now: number): Promise<CancelOutcome[]>;
  /** Moves a pending task's runAt (earlier or later); any other state is `not_pending`. */
  reschedule(id: string, runAt: number, now: number): Promise<RescheduleOutcome>;
}

/** The scheduler's feed: what is due when, so the engine can keep a near window in its wheel. */
export interface TimerSource {
  /**
   * Timers with `dueAt < until`, ordered by (dueAt, seq), strictly after `after` when
   * given, at most `limit`: every pending task (kind 'run', dueAt = runAt) and every
   * reservation (kind 'ttr', dueAt = reservedUntil, with its receipt). Completed,
   * cancelled and dead tasks never appear.
   */
  loadDue(until: number, after: DueCursor | null, limit: number): Promise<TimerRef[]>;
}

/** Consumers: reserve due tasks and settle them. */
export interface ConsumerStore {
  /**
   * For each id that is `pending` with `runAt <= now`: -> `reserved`, attempts + 1, a new
   * receipt, reservedUntil = now + (ttrMs ?? the task's ttrMs). Other ids are skipped
   * (cancelled, rescheduled later, already reserved...). Returns the reserved records in
   * input order. A task is never reserved before its runAt.
   */
  reserve(ids: readonly string[], now: number, ttrMs?: number): Promise<ReservedTask[]>;
  /**
   * `reserve` given the timer refs this store handed out (from schedule, reschedule, nack,
   * expire, retryDead or loadDue) instead of bare ids, answering as `reserve` of their ids
   * would; except that a ref to a task since purged may be refused even when a new task
   * took its id (that task has a ref of its own). A store may keep in its refs whatever
   * spares it a lookup (the memory store keeps the task); one that has nothing to gain
   * reserves by id (`reserveRefsByIds`, src/core/batch-fallbacks.ts). The engine reserves
   * the due tasks of its ready queue through it.
   */
  reserveRefs(refs: readonly TimerRef[], now: number, ttrMs?: number): Promise<ReservedTask[]>;
  /**
   * reserved -> completed, only with the current receipt. Idempotent: the ack that completed
   * the task, sent again with the same receipt (its reply was lost), answers `acked` and
   * changes nothing, for as long as the completed task is kept (until purge). Any other
   * receipt is `stale`.
   */
  ack(id: string, receipt: string, now: number): Promise<AckOutcome>;
  /**
   * `ack` of several deliveries in one call, outcomes in input order, each exactly what
   * `ack` would have answered alone (an id twice with one receipt: both `acked`). The engine uses it
   * for `DelayQueue.ackMany` and for the acks of its own workers' handlers that finish in
   * the same turn. Resolves only once every ack in it is durable. A store with no batch path
   * of its own uses `ackEachOneByOne` (core/batch-fallbacks.ts).
   */
  ackMany(acks: readonly AckRequest[], now: number): Promise<AckOutcome[]>;
  /**
   * A failed attempt, only with the current receipt: -> dead when attempts >= maxAttempts,
   * else -> pending at now + (delayMs ?? backoff(attempts)).
   */
  nack(id: string, receipt: string, now: number, options: StoreNackOptions): Promise<NackOutcome>;
  /**
   * The reservation named by `receipt` ran out (`reservedUntil <= now`): -> dead when
   * attempts >= maxAttempts, else -> pending at `now` (delivered again at once).
   * `stale` when the task is no longer reserved with that receipt or has not run out.
   */
  expire(id: string, receipt: string, now: number): Promise<NackOutcome>;
  /**
   * Gives the reservation named by `receipt` back without counting its attempt: -> pending
   * at `runAt`, attempts - 1, lastError unchanged; `stale` unless reserved with that receipt.
   * The Pusher defers the pushes its circuit breaker holds back (ADR 0022): a task waiting
   * for an origin to recover never dies of it.
   */
  defer(id: string, receipt: string, runAt: number, now: number): Promise<DeferOutcome>;
}

/** Operators: look at tasks, bring dead ones back, clean up finished ones. */
export interface InspectorStore {
  get(id: string): Promise<TaskRecord | null>;
  list(filter: ListFilter): Promise<TaskRecord[]>;
  stats(): Promise<StoreStats>;
  /**
   * How many pending tasks fall due in each bucket of the query (of one topic, or all),
   * answered from what the store keeps by time: counts kept per minute (memory) or per hour
   * of parked tasks (Redis), ZCOUNTs of a time index (Redis), or a range of its index and the
   * tasks in it (SQLite; Redis for a topic or for parked tasks in buckets finer than an hour,
   * reading at most a bounded number of them). Its cost grows with the number of buckets and
   * with the tasks in the range read, never with every task the store holds; a store that
   * stops reading says how far its counts are complete (DueHistogram.coveredUntil). The
   * caller checks the query (aligned to DUE_HISTOGRAM_GRAIN_MS, from < to, a bounded number
   * of buckets).
   */
  dueHistogram(query: DueHistogramQuery): Promise<DueHistogram>;
  /** dead -> cancelled: a dead task given up on (purged after the retention, like any cancelled task). */
  cancelDead(id: string, now: number): Promise<CancelDeadOutcome>;
  /** dead -> pending at runAt, attempts reset to 0. */
  retryDead(id: string, runAt: number, now: number): Promise<RetryDeadOutcome>;
  /**
   * Deletes up to `limit` completed and cancelled tasks last updated before `before`,
   * freeing their ids. Returns how many were deleted. Never touches live or dead tasks.
   */
  purge(before: number, limit: number): Promise<number>;
}

/**
 * Push subscriptions, one per topic, durable as tasks are. Small and rarely changed: every
 * engine process reads them all (listPushSubscriptions) when it starts and again every
 * `pushSyncMs`, so a subscription set through one process reaches the others.
 */
export interface PushSubscriptionStore {
  /** Creates or replaces the subscription of `subscription.topic`. */
  putPushSubscription(subscription: PushSubscription): Promise<void>;
  getPushSubscription(topic: string): Promise<PushSubscription | null>;
  /** Every subscription, by topic in ascending order. */
  listPushSubscriptions(): Promise<PushSubscription[]>;
  /** True if there was one. */
  deletePushSubscription(topic: string): Promise<boolean>;
}

/**
 * Recurring schedules (src/core/schedule), durable as tasks are. Every engine process
 * reads them all (listSchedules) when it starts and again whenever schedulesVersion has
 * changed (checked every `scheduleSyncMs`), and moves a
 * schedule forward with swapSchedule after creating its occurrences: a compare-and-swap,
 * so two processes planning the same schedule move it once, and a change made meanwhile
 * (an upsert, a pause) is never overwritten by a plan made before it.
 */
export interface ScheduleStore {
  /** Creates or replaces the schedule `record.id`. */
  putSchedule(record: ScheduleRecord): Promise<void>;
  getSchedule(id: string): Promise<ScheduleRecord | null>;
  /** `putSchedule` of many schedules (distinct ids) in one call. */
  putSchedules(records: readonly ScheduleRecord[]): Promise<void>;
  /**
   * Stores each record whose id has no schedule yet (distinct ids), in one call: one answer
   * each in input order, null when it was stored, the stored schedule (left as it is) when
   * the id has one. An upsert of new schedules writes without reading first.
   */
  putNewSchedules(records: readonly ScheduleRecord[]): Promise<(ScheduleRecord | null)[]>;
  /** `getSchedule` of many ids in one call, one answer each in input order. */
  getSchedules(ids: readonly string[]): Promise<(ScheduleRecord | null)[]>;
  /** Every schedule, by id in ascending order. */
  listSchedules(): Promise<ScheduleRecord[]>;
  /** True if there was one. */
  deleteSchedule(id: string): Promise<boolean>;
  /**
   * Replaces the schedule with `next` only if it is stored exactly as `expected` (every
   * field equal, as read by getSchedule or listSchedules); false, changing nothing, when it
   * changed since or is gone. Atomic like a task change.
   */
  swapSchedule(expected: ScheduleRecord, next: ScheduleRecord): Promise<boolean>;
  /**
   * `swapSchedule` of many schedules in one call (distinct ids), one answer each in input
   * order; each swap is atomic on its own, not the call as a whole. The schedule loop moves
   * every due schedule through it at once.
   */
  swapSchedules(swaps: readonly ScheduleSwap[]): Promise<boolean[]>;
  /**
   * A token that changes whenever what another process must re-read changes: a schedule
   * put or deleted, or swapped to a new definition (`rev` or `createdAt`) or paused state.
   * A swap that only moves a schedule forward (same rev, createdAt and paused: what the
   * schedule loop does at every occurrence) leaves it as it is, so a process re-reads the
   * list only after a change it has to learn of, not every `scheduleSyncMs` (ADR 0033).
   * Changed atomically with the write that changes it.
   */
  schedulesVersion(): Promise<string>;
}

/** True when a swap changes what schedulesVersion covers (not a mere move forward). */
export function swapChangesDefinition(swap: ScheduleSwap): boolean {
  const { expected, next } = swap;
  return next.rev !== expected.rev || next.createdAt !== expected.createdAt || next.paused !== expected.paused;
}

export interface ScheduleSwap {
  readonly expected: ScheduleRecord;
  readonly next: ScheduleRecord;
}

export interface TaskStore extends ProducerStore, TimerSource, ConsumerStore, InspectorStore, PushSubscriptionStore, ScheduleStore {
  /** A short name for logs and stats ("memory", "sqlite:/path/file.db"). */
  readonly description: string;
  /**
   * How much of the schedule the engine keeps in its wheel: tasks due within this many
   * ms. Infinity (the memory store) keeps everything; disk stores keep a window.
   */
  readonly horizonMs: number;
  /**
   * What several engine processes sharing this store's backing use to work as one queue
   * (docs/stores.md): null for a store one process owns (memory, SQLite). Required of a
   * store that more than one process may open, or two processes would each keep all the
   * timers and deliver every task twice.
   */
  readonly shared: SharedDispatch | null;
  /** Slots on the store's own task objects for the engine's run timers (the memory store), or null. */
  readonly timerHomes: TimerHomes | null;
  /** Releases connections and files; idempotent. Later calls reject (QUEUE_CLOSED). */
  close(): Promise<void>;
}

/**
 * Every method of the port, by role: what the metrics time, and what a store written
 * outside delayq implements. The compiler checks the list is complete (below).
 */
export const TASK_STORE_OPERATIONS = {
  producer: ['schedule', 'cancel', 'cancelMany', 'reschedule'],
  timers: ['loadDue'],
  consumer: ['reserve', 'reserveRefs', 'ack', 'ackMany', 'nack', 'expire', 'defer'],
  inspector: ['get', 'list', 'stats', 'dueHistogram', 'cancelDead', 'retryDead', 'purge'],
  pushSubscriptions: ['putPushSubscription', 'getPushSubscription', 'listPushSubscriptions', 'deletePushSubscription'],
  schedules: ['putSchedule', 'getSchedule', 'putSchedules', 'putNewSchedules', 'getSchedules', 'listSchedules', 'deleteSchedule', 'swapSchedule', 'swapSchedules', 'schedulesVersion'],
  lifecycle: ['close'],
} as const satisfies Record<string, readonly (keyof TaskStore)[]>;

/** The methods of the shared part (`store.shared`). */
export const SHARED_DISPATCH_OPERATIONS = ['promote', 'reserveReady', 'onRemoteTimer'] as const satisfies readonly (keyof SharedDispatch)[];

type MethodOf<T> = { [K in keyof T]-?: T[K] extends (...args: never[]) => unknown ? K : never }[keyof T];
type Listed = (typeof TASK_STORE_OPERATIONS)[keyof typeof TASK_STORE_OPERATIONS][number];
// A method added to the port and not to the list above fails to compile here, naming it.
const everyOperationListed: [Exclude<MethodOf<TaskStore>, Listed>] extends [never] ? true : Exclude<MethodOf<TaskStore>, Listed> = true;
const everySharedOperationListed: [Exclude<MethodOf<SharedDispatch>, (typeof SHARED_DISPATCH_OPERATIONS)[number]>] extends [never] ? true : never = true;
void everyOperationListed;
void everySharedOperationListed;

/**
 * The coordination part of a store that several engine processes share (Redis): its
 * `shared`. Each process keeps in its wheel only the timers of the store partitions it
 * owns; due tasks go into shared ready lists instead of the process's own ready queue, so
 * consumers in any process reserve them.
 */
export interface SharedDispatch {
  /**
   * Makes due 'run' timers available to every process's consumers. Refs of tasks no
   * longer pending and due, or of partitions this process does not own, are ignored (the
   * owner has them). A rejection means nothing may have been made ready: retry the refs.
   */
  promote(refs: readonly TimerRef[], now: number): Promise<void>;
  /**
   * Reserves up to `max` ready tasks of `topic`, as `reserve` does (new receipt,
   * reservedUntil = now() + (ttrMs ?? the task's ttrMs)); waits until one is ready or
   * `signal` aborts (then resolves with []). `now` is read at each reservation, not at the
   * call.
   */
  reserveReady(topic: string, max: number, now: () => number, ttrMs: number | undefined, signal: AbortSignal): Promise<ReservedTask[]>;
  /**
   * Registers the receiver of timers this process must now keep although it did not
   * create them: near-window tasks scheduled by other processes into its partitions, the
   * timers of partitions it takes over, and reservations that ran out in a dead process.
   */
  onRemoteTimer(listener: (ref: TimerRef) => void): void;
}

/** The engine's handle on a task's run timer (the wheel's own handle). */
export type RunTimerHandle = TimerHandle<TimerRef>;

/** A slot on a task, lent to the engine for that task's run timer. */
export interface TimerHome {
  /** Written and cleared by the engine only; a store creates it undefined and never reads it. */
  runTimer: RunTimerHandle | undefined;
}

/** A run ref of a store with timer homes: it carries its task's home. */
export interface HomedRunRef extends TimerRef {
  readonly home: TimerHome;
}

/**
 * Optional capability of a store that keeps its tasks as objects in memory (the memory
 * store): it lends the engine a slot on each task for the task's run timer, so the engine
 * keeps those timers in no map by id of its own, and scheduling and firing a timer touch
 * no map at all. Every 'run' ref such a store hands out is a `HomedRunRef`; its 'ttr' refs
 * carry no home (the engine keeps reservation timers by id). A store that has it sets its
 * `timerHomes`.
 */
export interface TimerHomes {
  /**
   * The home of task `id`'s run timer, or undefined for an unknown id: how the engine finds
   * a timer when a task is cancelled, rescheduled or settled by id. Synchronous: it is asked
   * on the engine's own path.
   */
  timerHome(id: string): TimerHome | undefined;
}

/** The home a run ref of a `TimerHomes` store carries; undefined for any other ref. */
export function homeOf(ref: TimerRef): TimerHome | undefined {
  return (ref as Partial<HomedRunRef>).home;
}
