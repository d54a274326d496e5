/**
 * The HTTP API's request and response bodies (paths and fields are a contract: see
 * docs/service.md). Shared by the server and the client; times are epoch ms unless a
 * field says otherwise.
 */
import type { WireErrorCode } from './error-codes.js';

export const TASK_STATES = ['pending', 'reserved', 'completed', 'dead', 'cancelled'] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** A time: epoch ms, or an ISO 8601 date-time string such as 2030-01-01T00:00:00Z. */
export type WireTime = number | string;

export interface BackoffPolicy {
  baseMs: number;
  factor: number;
  maxMs: number;
  jitter: number;
}

export interface ScheduleRequest {
  /** Idempotency key: scheduling an id that exists changes nothing and answers 200. */
  id?: string;
  topic: string;
  payload?: unknown;
  /** Give delayMs or runAt, not both; neither means now. */
  delayMs?: number;
  runAt?: WireTime;
  ttrMs?: number;
  maxAttempts?: number;
  backoff?: Partial<BackoffPolicy>;
  /**
   * Push this task to this URL when due, whatever its topic (never to pull consumers),
   * signed with the topic's push secret or the server's default (docs/push.md).
   */
  url?: string;
  /** -100..100, default 0: among due tasks of the topic, higher is delivered first (never before runAt). */
  priority?: number;
}

export interface ScheduleResponse {
  id: string;
  runAt: number;
  /** false when a task with this id already existed (status 200 instead of 201). */
  created: boolean;
}

export interface BatchRequest {
  tasks: ScheduleRequest[];
}

export interface ErrorBody {
  error: { code: WireErrorCode; message: string; details?: Record<string, unknown> };
}

export type BatchItemResult = ScheduleResponse | ErrorBody;

export interface BatchResponse {
  /** One entry per task, in request order: scheduled, or why not. */
  results: BatchItemResult[];
}

export interface RescheduleRequest {
  delayMs?: number;
  runAt?: WireTime;
}

export interface RescheduleResponse {
  id: string;
  runAt: number;
}

export interface CancelResponse {
  cancelled: true;
}

/** POST /v1/tasks/cancel: cancel several tasks in one request. */
export interface CancelManyRequest {
  ids: string[];
}

export interface CancelManyResponse {
  /** One entry per id, in request order: true if it was pending and is now cancelled. */
  results: { id: string; cancelled: boolean }[];
}

export interface TaskView<P = unknown> {
  id: string;
  topic: string;
  payload: P;
  runAt: number;
  state: TaskState;
  attempts: number;
  maxAttempts: number;
  ttrMs: number;
  backoff: BackoffPolicy;
  createdAt: number;
  updatedAt: number;
  reservedUntil: number | null;
  lastError: string | null;
  /** The task's own push url (schedule's `url`), or null. */
  url: string | null;
  /** Its priority (0 by default). */
  priority: number;
  /** W3C trace context of the call that scheduled the task, as its deliveries carry it; absent for none. */
  traceparent?: string;
  tracestate?: string;
  /** The last attempts, oldest first, at most 10. */
  history: readonly AttemptView[];
}

/** One attempt of a task (its history). */
export interface AttemptView {
  /** 1 for the first delivery. */
  attempt: number;
  /** When its reservation was made (ms since the epoch). */
  startedAt: number;
  /** From its reservation until it was settled. */
  durationMs: number;
  /** `acked`, `nacked`, `expired`, or for a failed push `push:<class>` (`push:5xx`, `push:timeout`...). */
  outcome: string;
  /** The error text, cut to 500 characters; null for an ack. */
  error: string | null;
}

export interface ListQuery {
  topic?: string;
  state?: TaskState;
  limit?: number;
  /** Resume after this id (tasks come in id order). */
  after?: string;
}

export interface ListResponse<P = unknown> {
  tasks: TaskView<P>[];
  /** Pass as `after` for the next page; null when this page was the last. */
  next: string | null;
}

export interface ReserveRequest {
  /** Most tasks to take (default 1). */
  max?: number;
  /** Long-poll: wait up to this long for a task to fall due (default 0). */
  waitMs?: number;
  /** Reservation length; default each task's ttrMs. */
  ttrMs?: number;
}

export interface DeliveryView<P = unknown> {
  id: string;
  topic: string;
  payload: P;
  runAt: number;
  attempt: number;
  maxAttempts: number;
  /** Ack or nack with this before reservedUntil, or the task is delivered again. */
  receipt: string;
  reservedUntil: number;
  /** W3C trace context of the call that scheduled the task (its span, when delayq made one); absent for none. */
  traceparent?: string;
  tracestate?: string;
}

export interface ReserveResponse<P = unknown> {
  tasks: DeliveryView<P>[];
}

export interface AckRequest {
  receipt: string;
}

export interface AckResponse {
  acked: true;
}

/** POST /v1/tasks/ack: ack the deliveries of a reserve (or any several) in one request. */
export interface AckManyRequest {
  acks: { id: string; receipt: string }[];
}

export interface AckManyResponse {
  /** One entry per ack, in request order. */
  results: ({ id: string; acked: true } | { id: string; error: { code: 'STALE_RECEIPT' | 'TASK_NOT_FOUND'; message: string } })[];
}

/** POST /v1/tasks/:id/extend: more time for a reservation in force. */
export interface ExtendRequest {
  receipt: string;
  /** The reservation runs this long from now; default: the task's own ttrMs. */
  ttrMs?: number;
}

export interface ExtendResponse {
  /** When the reservation now runs out (epoch ms). */
  reservedUntil: number;
}

export interface NackRequest {
  receipt: string;
  /** Retry after this delay instead of the task's backoff. */
  delayMs?: number;
  /** Recorded as the task's lastError. */
  error?: string;
}

export type NackResponse = { state: 'pending'; runAt: number } | { state: 'dead' };

export interface LatenessSummary {
  count: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

/**
 * GET /v1/stats?topicLimit=&after=: the queue's totals, and its per-topic parts (`topics`,
 * `ready`, `oldestReady`, `push.topics`) for one page of topics in name order (docs/service.md).
 */
export interface StatsResponse {
  store: string;
  counts: Record<TaskState, number>;
  topics: Record<string, Partial<Record<TaskState, number>>>;
  /** The partitions (shards) of a shared store that cannot take writes now (docs/redis.md, "A shard that cannot take writes"); empty when all can. */
  unavailable: { partition: number; since: number; error: string }[];
  timers: number;
  ready: Record<string, number>;
  /** runAt of each topic's longest-waiting ready task (memory and SQLite; a hint). */
  oldestReady: Record<string, number>;
  /** Reserve long-polls waiting now. */
  waiting: number;
  /** Every paused topic, in name order (POST /v1/topics/:topic/pause). */
  paused: string[];
  /** The flow limits of each limited topic of this page (PUT /v1/topics/:topic/limits). */
  limits: Record<string, TopicLimitsView>;
  /** Per topic of this page: deliveries that waited for the topic's limits (refused admissions) since the server started. */
  throttled: Record<string, number>;
  lateness: LatenessSummary;
  /** Push counters since the server started, per topic and destination origin (docs/push.md, "Stats"). */
  push?: PushStatsView;
  /** Due tasks waiting for a consumer, over every topic (`ready` holds this page's topics only). */
  readyTotal: number;
  /** Pass as `after` for the next page of topics; null when this page has the last. */
  topicsNext: string | null;
  /** Topics in all pages. */
  topicCount: number;
}

export interface PushCountsView {
  /** Requests sent. */
  sent: number;
  /** Answered 2xx. */
  ok: number;
  /** Failed attempts by class: timeout, connection, refused, aborted, http5xx, http429, http4xx, http3xx, unsigned. */
  failed: Partial<Record<string, number>>;
  /** Held back by an open circuit breaker: not sent, no attempt spent. */
  deferred: number;
  /** Found no free push slot in time: not sent, no attempt spent, due again at once. Absent from servers before 0.2. */
  noSlot?: number;
}

export interface PushStatsView {
  topics: Record<string, PushCountsView>;
  origins: Record<string, PushCountsView & { breaker: { state: 'closed' | 'open' | 'half-open'; consecutiveFailures: number; openUntil: number | null } }>;
}

/** GET /v1/timeline: pending tasks falling due per bucket (docs/dashboard.md#timeline). */
export interface TimelineResponse {
  from: number;
  to: number;
  bucketMs: number;
  topic: string | null;
  counts: number[];
  /** Complete for runAt < coveredUntil (stores park far-future tasks outside their index). */
  coveredUntil: number;
}

/** POST /v1/topics/:topic/dead/retry. */
export interface RetryDeadManyResponse {
  retried: number;
  /** Dead tasks of the topic remain. */
  more: boolean;
}

/** POST /v1/topics/:topic/pause and /resume. */
export interface TopicPauseResponse {
  topic: string;
  /** The topic is paused now. */
  paused: boolean;
  /** False if it was so already. */
  changed: boolean;
}

/** A topic's flow limits as stored (docs/service.md, "Flow control"). */
export interface TopicLimitsView {
  /** Deliveries per `periodMs`; null: no rate limit. */
  rate: number | null;
  periodMs: number;
  /** The most deliveries at once after an idle spell. */
  burst: number;
  /** The most deliveries in flight at once; null: no cap. */
  concurrency: number | null;
}

/** PUT /v1/topics/:topic/limits: `rate` (with `periodMs`, default 1000, and `burst`, default `rate`) and/or `concurrency`. */
export interface TopicLimitsRequest {
  rate?: number;
  periodMs?: number;
  burst?: number;
  concurrency?: number;
}

/** PUT and GET /v1/topics/:topic/limits. */
export interface TopicLimitsResponse {
  topic: string;
  limits: TopicLimitsView;
}

/** DELETE /v1/topics/:topic/limits (404 LIMITS_NOT_FOUND when the topic had none). */
export interface TopicLimitsDeleteResponse {
  deleted: true;
}

/** The states DELETE /v1/topics/:topic/tasks purges: `completed` also takes the cancelled tasks. */
export type TopicPurgeState = 'pending' | 'dead' | 'completed';

/** DELETE /v1/topics/:topic/tasks?state=... */
export interface TopicPurgeResponse {
  /** Tasks deleted. */
  purged: number;
}

/** POST /v1/topics/:topic/dead/cancel. */
export interface CancelDeadManyResponse {
  cancelled: number;
  /** Dead tasks of the topic remain. */
  more: boolean;
}

export interface HealthResponse {
  status: 'ok' | 'closing';
}

/** GET /readyz when ready. */
export interface ReadyResponse {
  status: 'ready';
}

/**
 * GET /readyz when not ready (503): the reason, as an error's code and message, only for a
 * request with the server's token; the log has it (redacted) either way.
 */
export interface NotReadyResponse {
  status: 'not ready';
  error?: { code: WireErrorCode; message: string };
}

export type * from './push-types.js';
export type * from './recurring-types.js';
export type * from './event-types.js';
