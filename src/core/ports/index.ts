/**
 * The ports: what the engine needs from the outside world, as interfaces only, one file
 * per role (clock, tasks, schedules, push subscriptions, topic pauses and limits, coordination) and the whole
 * store port here.
 *
 * The store port is split by role, so each caller sees only what it uses and each
 * contract is small enough to state. Every store (memory, SQLite, Redis, PostgreSQL) implements all
 * of them and must pass the conformance suites of src/testing/ (delayq/testing) unchanged.
 *
 * Contract shared by every method:
 * - `now` is passed in; a store never reads a clock, so time-dependent behaviour is
 *   decided by the caller and testable with a manual clock.
 * - A returned promise resolves only once the change is as durable as the store
 *   promises (memory: applied; SQLite: committed; Redis: acknowledged by Redis).
 * - A change is atomic per task: a concurrent caller sees the state before or after it.
 * - Outcomes that a caller can act on ("not found", "stale receipt") are returned
 *   values; a rejected promise means the store itself failed (DelayQError with
 *   STORE_UNAVAILABLE or similar) and nothing was changed by that call; except that a
 *   batch call of a store cut into partitions is atomic per partition: it may reject with
 *   a PartialBatchError (src/core/partial-batch.ts) whose outcomes are those of the items
 *   whose partitions answered (those were changed), undefined for the rest.
 */
import type { RunTimerIndex, SharedDispatch } from './coordination.js';
import type { TaskEventLog } from './events.js';
import type { PushSubscriptionStore } from './push-subscriptions.js';
import type { RecurringScheduleStore } from './schedules.js';
import type { ConsumerStore, InspectorStore, ProducerStore, TimerSource } from './tasks.js';
import type { TopicLimitStore } from './topic-limits.js';
import type { TopicPauseStore } from './topic-pauses.js';
import type { TransactionalTasks } from './transactions.js';

export type * from './clock.js';
export type * from './coordination.js';
export type * from './events.js';
export type * from './push-subscriptions.js';
export type * from './schedules.js';
export type * from './tasks.js';
export type * from './topic-limits.js';
export type * from './topic-pauses.js';
export type * from './transactions.js';

/** A store's tasks role (`store.tasks`): producers, the timer source, consumers and inspection (ports/tasks.ts). */
export interface TaskRoles extends ProducerStore, TimerSource, ConsumerStore, InspectorStore {
  /**
   * Where the store keeps the engine's run timers, when it offers to (the memory store, on
   * its task objects: ports/coordination.ts RunTimerIndex); absent: the engine keeps them.
   */
  readonly runTimers?: RunTimerIndex | undefined;
}

/** A store's topics role (`store.topics`): the paused topics, and the limits with the state they govern. */
export interface TopicStore extends TopicPauseStore, TopicLimitStore {}

/**
 * The store port, as objects by role: `tasks`, `schedules`, `push`, `topics`, and
 * `coordination` for a store several processes share.
 */
export interface TaskStore {
  /** A short name for logs and stats ("memory", "sqlite:/path/file.db"). */
  readonly description: string;
  /** The tasks: scheduling, the timer source, reserving and settling, inspection. */
  readonly tasks: TaskRoles;
  /** The recurring schedules (ports/schedules.ts). */
  readonly schedules: RecurringScheduleStore;
  /** The push subscriptions, one per topic (ports/push-subscriptions.ts). */
  readonly push: PushSubscriptionStore;
  /** The paused topics and the topic limits (ports/topic-pauses.ts, ports/topic-limits.ts). */
  readonly topics: TopicStore;
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
  readonly coordination: SharedDispatch | null;
  /**
   * Scheduling and cancelling inside a transaction of the caller's (ports/transactions.ts):
   * set by a store that keeps its tasks in the caller's database (PostgreSQL), else null.
   */
  readonly transactional: TransactionalTasks | null;
  /**
   * The lifecycle events' log every process sharing the store reads (ports/events.ts), or
   * absent for a store one process owns: the engine keeps its events in memory then.
   */
  readonly eventLog?: TaskEventLog | undefined;
  /** Releases connections and files; idempotent. Later calls reject (QUEUE_CLOSED). */
  close(): Promise<void>;
}

/**
 * Every method of the port's role objects (`store.tasks`, `store.schedules`, `store.push`,
 * `store.topics`), by role: what the metrics time, and what a store written outside delayq
 * implements. The compiler checks the lists are complete (below); the store's own only
 * method is `close`.
 */
export const STORE_ROLE_OPERATIONS = {
  tasks: [
    ...['schedule', 'cancel', 'cancelMany', 'reschedule'], // producer
    'loadDue', // timer source
    ...['reserve', 'reserveRefs', 'ack', 'ackMany', 'nack', 'expire', 'extend', 'defer'], // consumer
    ...['get', 'list', 'stats', 'dueHistogram', 'cancelDead', 'retryDead', 'purge', 'purgeTopic', 'quarantine'], // inspector
  ],
  schedules: ['putSchedule', 'getSchedule', 'putSchedules', 'putNewSchedules', 'getSchedules', 'listSchedules', 'deleteSchedule', 'swapSchedule', 'swapSchedules', 'schedulesVersion'],
  push: ['putPushSubscription', 'getPushSubscription', 'listPushSubscriptions', 'deletePushSubscription'],
  topics: ['setTopicPaused', 'pausedTopics', 'setTopicLimits', 'topicLimits', 'admitFlow', 'bindFlow', 'releaseFlow', 'holdFlow', 'reservedLeases'],
} as const satisfies { [Role in StoreRole]: readonly (keyof TaskStore[Role])[] };

/** The names of the store's role objects. */
export type StoreRole = 'tasks' | 'schedules' | 'push' | 'topics';

/** The methods of the coordination part (`store.coordination`). */
export const COORDINATION_OPERATIONS = ['promote', 'reserveReady', 'onRemoteTimer', 'badNotices'] as const satisfies readonly (keyof SharedDispatch)[];

type MethodOf<T> = { [K in keyof T]-?: T[K] extends (...args: never[]) => unknown ? K : never }[keyof T];
// A method added to the port and not to the lists above fails to compile here, naming it.
const onlyCloseOfItsOwn: [Exclude<MethodOf<TaskStore>, 'close'>] extends [never] ? true : Exclude<MethodOf<TaskStore>, 'close'> = true;
type UnlistedOfRole = { [Role in StoreRole]: Exclude<MethodOf<TaskStore[Role]>, (typeof STORE_ROLE_OPERATIONS)[Role][number]> }[StoreRole];
const everyRoleOperationListed: [UnlistedOfRole] extends [never] ? true : UnlistedOfRole = true;
const everySharedOperationListed: [Exclude<MethodOf<SharedDispatch>, (typeof COORDINATION_OPERATIONS)[number]>] extends [never] ? true : never = true;
void onlyCloseOfItsOwn;
void everyRoleOperationListed;
void everySharedOperationListed;
