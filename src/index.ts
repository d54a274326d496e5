// The public API of the delayq package: curated named exports, no `export *`.
export { DelayQueue } from './open-queue.js';
export type { DelayQueueOptions } from './open-queue.js';
export type { QueueApi } from './engine/queue-api.js';
export type { PushOptions } from './push-wiring.js';
export type { MetricsOptions, PushFailure, QueueMetrics } from './metrics/prometheus.js';
export type { QueueObserver, SettleOutcome } from './core/observer.js';
export { TASK_EVENT_TYPES, decodeTaskEvent } from './core/events.js';
export type { EventDropReason, LoggedTaskEvent, TaskEvent, TaskEventType } from './core/events.js';
export type { EventSubscription } from './engine/events/task-events.js';
export type { PushPage, PushPageOptions, SetPushResult } from './engine/push/push-rules.js';
export { RecurringSchedules, MAX_PREVIEW } from './engine/recurring/recurring-schedules.js';
export type { RecurringScheduleInfo, RecurringUpsertResult } from './engine/recurring/recurring-schedules.js';
export { Topics } from './engine/topics/topics.js';
export type { TopicLimitsInput, TopicPurgeOptions } from './engine/topics/topics.js';
export type { TopicLimits } from './core/flow/limits.js';
export type { RecurringScheduleCounts } from './engine/recurring/known-schedules.js';
export { DEFAULT_MISFIRE, MAX_CATCH_UP, MAX_SCHEDULE_ID_LENGTH, MIN_EVERY_MS, MISFIRE_POLICIES, occurrenceId } from './core/schedule/model.js';
export type { MisfirePolicy, RecurringScheduleDefinition, RecurringScheduleRecord, RecurringScheduleState } from './core/schedule/model.js';
export type { RecurringRuleInput, RecurringScheduleInput } from './core/schedule/validate.js';
export { MAX_RETRY_AFTER_MS, PUSH_DEFAULTS, PUSH_ERROR_BODY_BYTES, PUSH_RESERVATION_MARGIN_MS, SECRET_ROTATION_GRACE_MS, judgePush } from './core/push.js';
export type { PushPorts, PushRequest, PushResponse, PushSecret, PushSignInput, PushSigner, PushSubscription, PushTransport, PushVerdict } from './core/push.js';
export { MAX_PUSH_CONCURRENCY, MAX_PUSH_TIMEOUT_MS, isValidSecret, maskSecret } from './core/push-input.js';
export type { PushInput } from './core/push-input.js';
export type {
  EngineOptions,
  ExtendOptions,
  ExtendResult,
  ListOptions,
  NackOptions,
  NackResult,
  OutcomeOption,
  TransactionOption,
  QueueStats,
  RescheduleResult,
  ReserveOptions,
  ScheduleResult,
  TaskPage,
} from './engine/queue-types.js';
export { DEFAULT_ENGINE_TUNING, DEFAULT_LOADER_OPTIONS } from './core/options.js';
export type { EngineTuning, LoaderOptions } from './core/options.js';
export { ackEachOneByOne, cancelEachOneByOne, reserveRefsByIds } from './core/batch-fallbacks.js';
// For a store's list with a byte bound (ListFilter.maxSize): the one cut every store makes.
export { cutPage, cutPageAsync, listedSize, TASK_PAGE_SIZE } from './core/task/list-page.js';
export { Worker } from './engine/workers/worker.js';
export type { WorkOptions } from './engine/workers/worker.js';
export type { Handler, HandlerAckOptions, HandlerContext, HandlerNackOptions } from './engine/workers/job.js';
export type { LatenessSummary } from './engine/dispatch/lateness.js';
export { systemClock } from './engine/timers/wall-clock.js';
export { openStore } from './stores/open-store.js';
export { storeSystemClock } from './stores/system-clock.js';
export type { StoreOptions } from './stores/open-store.js';
export { MemoryStore } from './stores/memory/memory-store.js';
export { MemoryTasks } from './stores/memory/memory-tasks.js';

export { DelayQError, ERROR_CODES, isDelayQError } from './core/errors.js';
export { PartialBatchError } from './core/partial-batch.js';
export type { ErrorCode } from './core/errors.js';
export { ManualClock } from './core/manual-clock.js';
export type {
  AckOutcome,
  AckRequest,
  StoreAckOutcome,
  TopicPurgeState,
  TopicPurgeStep,
  CancelOutcome,
  StoreCancelOutcome,
  Clock,
  ConsumerStore,
  DueCursor,
  ExpireOutcome,
  ExtendOutcome,
  ExtendRequest,
  HomedRunRef,
  InspectorStore,
  ListFilter,
  Logger,
  NackOutcome,
  ProducerStore,
  PushSubscriptionStore,
  RescheduleOutcome,
  RecurringScheduleStore,
  RecurringScheduleSwap,
  RetryDeadOutcome,
  RunTimerHandle,
  ScheduleOutcome,
  StoreNackOptions,
  StoreStats,
  SharedDispatch,
  TaskEventLog,
  TaskEventPage,
  TaskRoles,
  TaskStore,
  TimerHome,
  TimerHomes,
  SqlTransaction,
  TransactionalTasks,
  TimerSource,
  TimerToken,
  TopicLimitStore,
  TopicPauseStore,
  TopicStore,
  UnavailablePartition,
} from './core/ports/index.js';
export { TASK_STATES } from './core/task/model.js';
// Names before 0.2 (docs/architecture.md, "Vocabulary"), kept as deprecated aliases.
/** @deprecated Use `StoreNackOptions`. */
export type { StoreNackOptions as FailOptions } from './core/ports/index.js';
/** @deprecated Use `NackOutcome`. */
export type { NackOutcome as FailOutcome } from './core/ports/index.js';
/** @deprecated Use `RetryDeadOutcome`. */
export type { RetryDeadOutcome as ReviveOutcome } from './core/ports/index.js';
/** @deprecated Use `ReservedTask`. */
export type { ReservedTask as ClaimedTask } from './core/task/model.js';
// Recurring-schedule names before 0.2: "schedule" now means scheduling a task only (docs/architecture.md, "Vocabulary").
/** @deprecated Use `RecurringSchedules`. */
export { RecurringSchedules as Schedules } from './engine/recurring/recurring-schedules.js';
/** @deprecated Use `RecurringScheduleInfo`. */
export type { RecurringScheduleInfo as ScheduleInfo } from './engine/recurring/recurring-schedules.js';
/** @deprecated Use `RecurringUpsertResult`. */
export type { RecurringUpsertResult as UpsertScheduleResult } from './engine/recurring/recurring-schedules.js';
/** @deprecated Use `RecurringScheduleCounts`. */
export type { RecurringScheduleCounts as ScheduleCounts } from './engine/recurring/known-schedules.js';
/** @deprecated Use `RecurringScheduleDefinition`. */
export type { RecurringScheduleDefinition as ScheduleDefinition } from './core/schedule/model.js';
/** @deprecated Use `RecurringScheduleRecord`. */
export type { RecurringScheduleRecord as ScheduleRecord } from './core/schedule/model.js';
/** @deprecated Use `RecurringScheduleState`. */
export type { RecurringScheduleState as ScheduleState } from './core/schedule/model.js';
/** @deprecated Use `RecurringScheduleInput`. */
export type { RecurringScheduleInput as RecurringInput } from './core/schedule/validate.js';
/** @deprecated Use `RecurringScheduleStore`. */
export type { RecurringScheduleStore as ScheduleStore } from './core/ports/index.js';
/** @deprecated Use `RecurringScheduleSwap`. */
export type { RecurringScheduleSwap as ScheduleSwap } from './core/ports/index.js';
export type { BackoffPolicy, Delivery, NewTaskRecord, ReservedTask, TaskInfo, TaskRecord, TaskState, TimerRef } from './core/task/model.js';
export { HISTORY_ERROR_LIMIT, HISTORY_LIMIT, type AttemptEntry, type AttemptOutcome } from './core/task/history.js';
export { DEFAULT_BACKOFF, backoffDelay } from './core/task/backoff.js';
export { DEFAULT_LIMITS, DEFAULT_TASK_DEFAULTS, MAX_RESERVE, MAX_WAIT_MS, validateScheduleInput } from './core/task/validate.js';
export type { Limits, ScheduleInput, TaskDefaults, WhenInput } from './core/task/validate.js';
export { MAX_TIME_MS, parseTime } from './core/time.js';
export type { TimeInput } from './core/time.js';
export { TimingWheel } from './core/wheel/timing-wheel.js';
export type { TimingWheelOptions } from './core/wheel/timing-wheel.js';
export type { Timer, TimerHandle } from './core/wheel/timer.js';
