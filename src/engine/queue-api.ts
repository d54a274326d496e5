/**
 * The library API of a queue, documented once: what each call of `DelayQueue` (the facade,
 * engine-queue.ts, which implements it) does and promises. The facade's methods carry no
 * documentation of their own; editors show this interface's.
 */
import type { CancelOutcome, AckOutcome, AckRequest } from '../core/ports/index.js';
import type { PushInput } from '../core/push-input.js';
import type { PushSubscription } from '../core/push.js';
import type { Delivery, TaskInfo } from '../core/task/model.js';
import type { Limits, ScheduleInput, WhenInput } from '../core/task/validate.js';
import type { LoggedTaskEvent } from '../core/events.js';
import type { EventSubscription } from './events/task-events.js';
import type { PushPage, PushPageOptions, SetPushResult } from './push/push-rules.js';
import type { DueHistogramOptions, DueHistogramResult, ExtendOptions, ExtendResult, ListOptions, NackOptions, NackResult, OutcomeOption, QueueStats, RescheduleResult, ReserveOptions, ScheduleResult, TaskPage, TransactionOption } from './queue-types.js';
import type { RecurringSchedules } from './recurring/recurring-schedules.js';
import type { Topics } from './topics/topics.js';
import type { Handler } from './workers/job.js';
import type { Worker, WorkerCloseOptions, WorkOptions } from './workers/worker.js';

export interface QueueApi {
  /** The limits in force (defaults merged with the options). */
  readonly limits: Limits;
  /**
   * Recurring schedules (docs/cron.md): `upsert`, `get`, `list`, `remove`, `pause`,
   * `resume` and `next` (a preview). Each occurrence is an ordinary task with the id
   * `<schedule id>:<occurrence ms>`, created once however many processes share the store.
   */
  readonly schedules: RecurringSchedules;
  /**
   * Operations on a whole topic: `purge(topic, { state })` deletes its pending, dead or
   * completed (and cancelled) tasks in bounded steps and answers how many (docs/library.md).
   */
  readonly topics: Topics;
  /**
   * Schedules one task. Resolves once the store holds it (durably, for durable stores). With
   * `{ tx }` (the PostgreSQL store) it is written inside that transaction of yours and
   * exists if and only if the transaction commits.
   */
  schedule(input: ScheduleInput, options?: TransactionOption): Promise<ScheduleResult>;
  /**
   * Schedules several tasks in one store write. Every task is validated first: one bad
   * task rejects the whole call (with its index in `details.index`) and nothing is stored.
   * With `{ tx }`, inside that transaction of yours (see `schedule`).
   */
  scheduleMany(inputs: readonly ScheduleInput[], options?: TransactionOption): Promise<ScheduleResult[]>;
  /**
   * Cancels a pending task: true if it was pending and is now cancelled. With
   * `{ outcome: true }` it says why not: `not_found`, or `not_pending` (delivered already...).
   */
  cancel(id: string, options?: Partial<TransactionOption>): Promise<boolean>;
  cancel(id: string, options: OutcomeOption & Partial<TransactionOption>): Promise<CancelOutcome>;
  /**
   * Cancels several tasks in one store call (up to `limits.maxBatch` ids): `result[i]` is
   * what `cancel(ids[i])` would answer. Every id is checked first, so a bad one rejects the
   * call and cancels nothing. If the store fails, the call rejects and some of the tasks
   * may be cancelled already; calling again answers false for those.
   */
  cancelMany(ids: readonly string[]): Promise<boolean[]>;
  /**
   * Moves a pending task to a new time (the keepalive case: each keepalive pushes the
   * deadline back): true if it was pending and now runs at the new time. With
   * `{ outcome: true }` it answers the new runAt, or why the task could not be moved.
   */
  reschedule(id: string, when: WhenInput): Promise<boolean>;
  reschedule(id: string, when: WhenInput, options: OutcomeOption): Promise<RescheduleResult>;
  /** @deprecated Use `cancel(id, { outcome: true })`. */
  cancelTask(id: string): Promise<CancelOutcome>;
  /** @deprecated Use `reschedule(id, when, { outcome: true })`. */
  rescheduleTask(id: string, when: WhenInput): Promise<RescheduleResult>;
  /** Tasks by id order, optionally of one topic and state; page with `afterId`. */
  list<P = unknown>(options?: ListOptions): Promise<TaskInfo<P>[]>;
  /**
   * One page of tasks by id order (as GET /v1/tasks): at most `limit` (default 100, at most
   * 10,000), and fewer once they pass 4 MiB of payloads, errors and history (the page ends
   * after the task that passes it); `next` is the `afterId` of the next page, null on the last.
   */
  listPage<P = unknown>(options?: ListOptions): Promise<TaskPage<P>>;
  /**
   * What the queue holds now: the store's counts by state and by topic, the partitions of a
   * shared store that cannot take writes, the timers in this process's wheel and the due
   * tasks waiting for a consumer, by topic.
   */
  stats(): Promise<QueueStats>;
  /**
   * How many pending tasks fall due per bucket (of one topic, or all) between `from` and
   * `to`: the timeline. The store answers from its index, in buckets of whole minutes;
   * `coveredUntil` says how far its index reaches (SQLite and Redis park far-future tasks).
   */
  dueHistogram(options?: DueHistogramOptions): Promise<DueHistogramResult>;
  /**
   * Gives up on a dead task: dead -> cancelled, purged after `retentionMs` like any finished
   * task. True if it was dead.
   */
  cancelDead(id: string): Promise<boolean>;
  /** Brings a dead task back to pending (attempts reset), due now or at the given time. */
  retryDead(id: string, when?: WhenInput): Promise<boolean>;
  /**
   * Pull consumers: reserves up to `max` due tasks of `topic`, waiting up to `waitMs` for
   * one to fall due. Each delivery must be acked (or nacked) with its receipt within its
   * reservation, or it is delivered again. While the topic has a push subscription
   * (setPush) this answers [] (after waiting out `waitMs`).
   */
  reserve<P = unknown>(topic: string, options?: ReserveOptions): Promise<Delivery<P>[]>;
  /**
   * Acks a delivery: the task is done. Throws STALE_RECEIPT if the reservation is not current.
   * With `{ tx }` (the PostgreSQL store), inside that transaction of yours: the task is
   * completed if and only if it commits, and a rollback leaves the reservation as it was (it
   * runs out at its ttr and the task is delivered again). After COMMIT, the same ack without
   * `tx` answers at once and frees what this process held for the delivery (a topic's
   * concurrency slot) instead of at the end of the reservation.
   */
  ack(id: string, receipt: string, options?: TransactionOption): Promise<void>;
  /**
   * Acks several deliveries in one store call (up to `limits.maxBatch`), for consumers that
   * reserve a batch and settle it together: `result[i]` is `'acked'`, `'stale'` (the receipt
   * is not the current reservation's: STALE_RECEIPT for `ack`) or `'not_found'`. Every id
   * and receipt is checked first.
   */
  ackMany(acks: readonly AckRequest[]): Promise<AckOutcome[]>;
  /**
   * Gives a reservation in force more time: it now runs out `ttrMs` from now (default: the
   * task's own ttrMs), and the answer is its new `reservedUntil`. For pull consumers whose
   * work takes longer than they reserved for (`work` handlers are renewed without asking).
   * Throws STALE_RECEIPT when the receipt names no reservation in force: settled, expired,
   * or run out even if not yet expired (an extension never revives one), and TASK_NOT_FOUND.
   */
  extend(id: string, receipt: string, options?: ExtendOptions): Promise<ExtendResult>;
  /**
   * Fails a delivery: the task is retried (after `delayMs`, or its backoff) or, out of
   * attempts, dead. Throws STALE_RECEIPT if the reservation is not current.
   */
  nack(id: string, receipt: string, options?: NackOptions & Partial<TransactionOption>): Promise<NackResult>;
  /**
   * In-process consumers: runs `handler` for each due task of `topic`, with bounded
   * concurrency. A handler that resolves acks the task; one that throws nacks it (retried
   * with backoff until maxAttempts, then dead). While the topic has a push subscription
   * (setPush) the handler gets nothing; it resumes when the subscription is deleted.
   */
  work<P = unknown>(topic: string, handler: Handler<P>, options?: WorkOptions): Worker;
  /**
   * Creates or replaces `topic`'s push subscription: from now on each due task of the topic
   * is POSTed to `input.url` (signed, retried like any failed delivery), and pull consumers
   * of the topic get nothing. The URL must pass the transport's SSRF rules (INVALID_URL).
   * A new secret rotates: the previous one keeps signing for SECRET_ROTATION_GRACE_MS.
   * No secret keeps the current one, or generates one for a new subscription. The answer
   * shows the secret only when it was given or generated.
   */
  setPush(topic: string, input: PushInput): Promise<SetPushResult>;
  /** The topic's push subscription (secrets masked), or null. */
  getPush(topic: string): Promise<PushSubscription | null>;
  /** Every push subscription by topic (secrets masked). */
  listPush(): Promise<PushSubscription[]>;
  /** One page of the push subscriptions by topic (secrets masked): after `after`, at most `limit` (default 100, at most 1,000); `next` is the `after` of the next page, null on the last. */
  listPushPage(options?: PushPageOptions): Promise<PushPage>;
  /**
   * Deletes the topic's push subscription: true if there was one. Pushes in flight finish;
   * the topic's tasks go to pull consumers again.
   */
  deletePush(topic: string): Promise<boolean>;
  /**
   * The lifecycle events (scheduled, delivered, acked, failed, dead, cancelled, rescheduled)
   * of every process writing to the store's log, as an async iterable: from now on, or after
   * `after` (an `eventId`) while the log still keeps it; of one `topic` and some `types` if
   * given. Ends with the queue, `signal`, or `break`. At most once: an event can be lost
   * (docs/library.md, "Lifecycle events"). INVALID_OPTION unless the queue was opened with
   * `events: true`.
   */
  events(options?: EventSubscription): AsyncIterableIterator<LoggedTaskEvent>;
  /**
   * Graceful stop: refuses new calls, ends long-polls, lets running handlers finish and
   * settle (renewing their reservations meanwhile), waits for store writes in flight, then
   * closes the store. With `timeoutMs` it waits at most that long for `work` handlers: each
   * one still running then is told to stop (its signal aborts with WORKER_CLOSED) and its
   * reservation is given back uncounted. Idempotent: a second call answers the first's promise.
   */
  close(options?: WorkerCloseOptions): Promise<void>;
  /** True once close() was called (closing or closed): new calls are refused. */
  readonly closed: boolean;
}
