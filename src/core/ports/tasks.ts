/**
 * The store port's task roles: producers, the timer source, consumers and operators, with
 * the outcomes their calls answer.
 */
import type { ReservedTask, NewTaskRecord, TaskRecord, TaskState, TimerRef } from '../task/model.js';

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

/**
 * A store's answer to a cancel: with `cancelled`, the task's own topic, read where the store
 * changed the task (so the engine counts the cancel under it without a second read, even for
 * a task whose timer is not in its wheel).
 */
export type StoreCancelOutcome =
  | { readonly status: 'cancelled'; readonly topic: string }
  | { readonly status: 'not_found' | 'not_pending' };

export type RescheduleOutcome =
  | { readonly status: 'rescheduled'; readonly ref: TimerRef }
  | { readonly status: 'not_found' | 'not_pending' };

/** What an ack answers its caller (`DelayQueue.ackMany`, HTTP): an ack sent again after it succeeded is `acked`. */
export type AckOutcome = 'acked' | 'not_found' | 'stale';

/**
 * A store's answer to an ack. `acked`: this call completed the task, answered with the
 * task's own topic, read where the store changed it (so the engine counts the ack under it
 * without a second read, even for a reservation whose timer is not in its wheel).
 * `already_acked`: the ack that completed the task, sent again with the same receipt (its
 * reply was lost, or one batch held the same delivery twice); it succeeded before, so the
 * caller hears `acked`, but nothing changed and it is not counted again. Answered while the
 * completed task is kept (until purge).
 */
export type StoreAckOutcome =
  | { readonly status: 'acked'; readonly topic: string }
  | { readonly status: 'already_acked' | 'not_found' | 'stale' };

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

/** With `retrying` and `dead`, the task's own topic (the ref's is its lane), for the engine's counters. */
export type NackOutcome =
  | { readonly status: 'retrying'; readonly ref: TimerRef; readonly topic: string }
  | { readonly status: 'dead'; readonly topic: string }
  | { readonly status: 'not_found' | 'stale' };

/**
 * A store's answer to an expiry: the nack outcomes, or `held` when the reservation named by
 * the receipt is still in force because it was extended (ExtendRequest) past `now`: `ref`
 * is its ttr timer at the new reservedUntil, which the engine places instead.
 */
export type ExpireOutcome = NackOutcome | { readonly status: 'held'; readonly ref: TimerRef };

/** One reservation to extend: a Delivery fits. */
export interface ExtendRequest {
  readonly id: string;
  readonly receipt: string;
  /** The reservation runs this long from `now`; absent: the task's own ttrMs. */
  readonly ttrMs?: number | undefined;
}

/** `extended`: the reservation now runs until `reservedUntil`. `stale`: the receipt names no reservation in force (settled, expired, or run out). */
export type ExtendOutcome = { readonly status: 'extended'; readonly reservedUntil: number } | { readonly status: 'not_found' | 'stale' };

/** A reservation given back without counting its attempt (TaskStore.defer). */
export interface DeferRequest {
  readonly id: string;
  readonly receipt: string;
  /** When the task falls due again. */
  readonly runAt: number;
  readonly now: number;
}

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
  /**
   * How the attempt ended, for its history entry (core/task/history.ts): `nacked` when
   * absent; the Pusher's nacks give `push:<class>`. Checked by isAttemptOutcome.
   */
  readonly outcome?: string;
  /** A number in [0, 1) for the backoff jitter (the store has no randomness of its own). */
  readonly random: number;
}

/** An attempt failed (TaskStore.nack): the reservation named by `receipt`, at `now`. */
export interface NackRequest extends StoreNackOptions {
  readonly id: string;
  readonly receipt: string;
  readonly now: number;
}

/**
 * The tasks a topic purge removes: `pending`, `dead`, or `completed`, which also takes the
 * topic's cancelled tasks (every store keeps them together as finished tasks, and the
 * janitor purges them together). Reserved tasks are never purged: their consumer settles them.
 */
export type TopicPurgeState = 'pending' | 'dead' | 'completed';

/** One step of a topic purge asked of the store (TaskStore.purgeTopic). */
export interface TopicPurgeRequest {
  readonly topic: string;
  readonly state: TopicPurgeState;
  /** null for a pass's first step, then the last step's `next`. */
  readonly cursor: string | null;
  /** The most tasks the step deletes. */
  readonly limit: number;
}

/** One step of a topic purge. */
export interface TopicPurgeStep {
  /** The ids this step deleted. */
  readonly ids: string[];
  /**
   * The run timers of the pending tasks among them, as the store hands its run refs out
   * (a store with timer homes gives their homes): the engine forgets exactly these timers
   * (same id and seq), never those of a new task that took one of the freed ids since.
   */
  readonly runs: TimerRef[];
  /** Where the next step resumes; null when the pass is over. */
  readonly next: string | null;
}

export interface ListFilter {
  readonly topic?: string;
  readonly state?: TaskState;
  readonly limit: number;
  /** Resume after this id (ids are listed in ascending order). */
  readonly afterId?: string;
  /**
   * A byte bound (core/task/list-page.ts): the list ends after the task that takes the sum
   * of `listedSize` past this, whatever `limit` says (`cutPage` makes exactly that cut), and
   * the store reads no further than it needs to. Absent: `limit` alone.
   */
  readonly maxSize?: number;
}

/** A task to quarantine (TaskStore.quarantine). */
export interface QuarantineRequest {
  readonly id: string;
  /** The reservation that read it, or null for a task read by get or list. */
  readonly receipt: string | null;
  /** Its lastError: `UNDECODABLE_ROW: <why>`. */
  readonly error: string;
}

export interface StoreStats {
  readonly byState: Readonly<Record<TaskState, number>>;
  readonly byTopic: Readonly<Record<string, Readonly<Partial<Record<TaskState, number>>>>>;
  /**
   * The partitions (shards) of a shared store that cannot take writes now, as this process
   * found them; absent when all can. Their tasks wait; the others are delivered as usual.
   */
  readonly unavailable?: readonly UnavailablePartition[];
}

export interface UnavailablePartition {
  readonly partition: number;
  /** Since when (ms since the epoch): the first write that failed. */
  readonly since: number;
  /** The last failure, as the store said it. */
  readonly error: string;
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
  /** pending -> cancelled, answered with the task's topic. Any other state is `not_pending`. */
  cancel(id: string, now: number): Promise<StoreCancelOutcome>;
  /**
   * `cancel` for many ids at once, one outcome per id in input order (an id given twice is
   * cancelled by its first occurrence; the second is `not_pending`). Not atomic as a whole
   * (the Redis store is atomic per shard), but every outcome is final. A store with no
   * batch path of its own uses `cancelEachOneByOne` (core/batch-fallbacks.ts).
   */
  cancelMany(ids: readonly string[], now: number): Promise<StoreCancelOutcome[]>;
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
   * reserved -> completed, only with the current receipt, answered `acked` with the task's
   * topic. Idempotent: the ack that completed the task, sent again with the same receipt
   * (its reply was lost), answers `already_acked` and changes nothing, for as long as the
   * completed task is kept (until purge). Any other receipt is `stale`.
   */
  ack(id: string, receipt: string, now: number): Promise<StoreAckOutcome>;
  /**
   * `ack` of several deliveries in one call, outcomes in input order, each exactly what
   * `ack` would have answered alone (an id twice with one receipt: `acked`, then
   * `already_acked`, so the ack is counted once). The engine uses it
   * for `DelayQueue.ackMany` and for the acks of its own workers' handlers that finish in
   * the same turn. Resolves only once every ack in it is durable. A store with no batch path
   * of its own uses `ackEachOneByOne` (core/batch-fallbacks.ts).
   */
  ackMany(acks: readonly AckRequest[], now: number): Promise<StoreAckOutcome[]>;
  /**
   * A failed attempt, only with the current receipt: -> dead when attempts >= maxAttempts,
   * else -> pending at now + (delayMs ?? backoff(attempts)).
   */
  nack(request: NackRequest): Promise<NackOutcome>;
  /**
   * The reservation named by `receipt` ran out (`reservedUntil <= now`): -> dead when
   * attempts >= maxAttempts, else -> pending at `now` (delivered again at once).
   * `held` (with its ttr timer at the reservation's end) when it is reserved with that
   * receipt and has not run out: it was extended since the timer was set. `stale` when the
   * task is no longer reserved with that receipt.
   */
  expire(id: string, receipt: string, now: number): Promise<ExpireOutcome>;
  /**
   * Extends reservations in force, one outcome per request in input order: a task reserved
   * with the request's receipt whose reservation has not run out (`reservedUntil > now`)
   * gets `reservedUntil = now + (ttrMs ?? the task's ttrMs)` (which may be sooner than
   * before) and answers `extended`; its attempt, receipt and the attempt's start (updatedAt)
   * are unchanged. Any other receipt, or a reservation that ran out even if nobody expired
   * it yet, is `stale`, and nothing changes: an extension never revives a reservation that
   * was lost. The engine's workers renew the reservations of handlers still running with
   * one call for many (DelayQueue.work); `DelayQueue.extend` is one. Atomic per task; a
   * store cut into partitions may reject with a PartialBatchError.
   */
  extend(requests: readonly ExtendRequest[], now: number): Promise<ExtendOutcome[]>;
  /**
   * Gives the reservation named by `receipt` back without counting its attempt: -> pending
   * at `runAt`, attempts - 1, lastError unchanged; `stale` unless reserved with that receipt.
   * The Pusher defers the pushes its circuit breaker holds back (ADR 0022): a task waiting
   * for an origin to recover never dies of it.
   */
  defer(request: DeferRequest): Promise<DeferOutcome>;
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
  /**
   * Tasks the engine could not read (core/task/undecodable.ts: a payload that is not JSON, an
   * id or a topic that is not a name: a row written around delayq) go to dead, with the
   * `error` given as lastError and nothing else of the row changed; each only while it is
   * pending, or reserved under `receipt` when one is given (the reservation that read it).
   * Counted like any change of state. Optional for stores outside this repository: without
   * it the engine fails such a task's attempts until it is dead.
   */
  quarantine?(tasks: readonly QuarantineRequest[], now: number): Promise<void>;
  /** dead -> pending at runAt, attempts reset to 0. */
  retryDead(id: string, runAt: number, now: number): Promise<RetryDeadOutcome>;
  /**
   * Deletes up to `limit` completed and cancelled tasks last updated before `before`,
   * freeing their ids. Returns how many were deleted. Never touches live or dead tasks.
   */
  purge(before: number, limit: number): Promise<number>;
  /**
   * One bounded step of a pass that deletes the tasks of `topic` in `state` (see
   * TopicPurgeState), freeing their ids: it deletes at most `limit` tasks and looks at a
   * bounded number (about `limit`, whatever the store holds), so one step never holds the
   * store long and deliveries go on between steps. A pass starts with `cursor` null and
   * goes on with each step's `next` until that is null; every task of the topic that was in
   * `state` for the whole pass is deleted by then (one that entered it meanwhile may stay).
   * A step may delete nothing and still have a `next`. Counters move by the purge deltas
   * (state -> none); a purged pending task leaves every index of the store (due times,
   * parking, ready lists), so it is never delivered.
   */
  purgeTopic(request: TopicPurgeRequest): Promise<TopicPurgeStep>;
}
