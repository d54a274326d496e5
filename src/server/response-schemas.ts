/**
 * JSON schemas of the answers, one per type of src/wire/types.ts. The routes declare them as
 * fastify response schemas (so the server serializes by them) and GET /openapi.json is built
 * from the routes (openapi.ts), so the document describes what the server sends.
 *
 * fastify's serializer drops any field a schema does not name, and writes a number for a
 * number field whatever it holds: each field here is named, with its real type (`nullable`
 * where it may be null), and free-form values (payloads, error details) stay free-form.
 * A test server checks every answer against its plain JSON form (response-check.ts).
 */
import { MAX_PRIORITY, MIN_PRIORITY } from '../core/task/validate.js';
import { CORE_ERROR_CODES, SERVER_ERROR_CODES } from '../wire/error-codes.js';
import { TASK_STATES } from '../wire/types.js';
import { HISTORY_ERROR_LIMIT, HISTORY_LIMIT } from '../core/task/history.js';

const int = { type: 'integer' } as const;
const epochMs = { type: 'integer', description: 'epoch ms' } as const;
const nullableEpochMs = { type: 'integer', nullable: true, description: 'epoch ms, or null' } as const;
const str = { type: 'string' } as const;
const nullableStr = { type: 'string', nullable: true } as const;
const bool = { type: 'boolean' } as const;
const yes = { type: 'boolean', enum: [true] } as const;
/** Any JSON value (a task's payload). */
const anyJson = { description: 'any JSON value, as scheduled' } as const;

function object<P extends Record<string, object>>(properties: P, required: readonly (keyof P & string)[] = Object.keys(properties)) {
  return { type: 'object', additionalProperties: false, required, properties } as const;
}

function mapOf<V extends object>(value: V, description?: string) {
  return { type: 'object', additionalProperties: value, ...(description !== undefined ? { description } : {}) } as const;
}

export const errorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['error'],
  description: 'The error envelope of every failed request (docs/errors.md lists each code)',
  properties: {
    error: {
      type: 'object',
      additionalProperties: false,
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: [...CORE_ERROR_CODES, ...SERVER_ERROR_CODES] },
        message: str,
        details: { type: 'object', additionalProperties: true, description: 'facts about the error, such as the field at fault (`field`) or a batch index (`index`)' },
      },
    },
  },
} as const;

export const backoffPolicySchema = object({ baseMs: { type: 'number' }, factor: { type: 'number' }, maxMs: { type: 'number' }, jitter: { type: 'number' } });

export const scheduleResultSchema = object({
  id: str,
  runAt: epochMs,
  created: { type: 'boolean', description: 'false when a task with this id already existed (status 200 instead of 201)' },
});

export const attemptSchema = object({
  attempt: { ...int, description: '1 for the first delivery' },
  startedAt: { ...epochMs, description: 'when its reservation was made' },
  durationMs: { ...int, description: 'from its reservation until it was settled' },
  outcome: {
    type: 'string',
    description: 'how it ended: `acked`, `nacked`, `expired` (its ttr ran out), or for a push that failed `push:<class>` (`push:5xx`, `push:4xx`, `push:429`, `push:3xx`, `push:timeout`, `push:connection`...)',
  },
  error: { ...nullableStr, maxLength: HISTORY_ERROR_LIMIT, description: `the error text, cut to ${HISTORY_ERROR_LIMIT} characters; null for an ack` },
});

export const taskSchema = object(
  {
    id: str,
    topic: str,
    payload: anyJson,
    runAt: epochMs,
    state: { type: 'string', enum: TASK_STATES },
    attempts: int,
    maxAttempts: int,
    ttrMs: int,
    backoff: backoffPolicySchema,
    createdAt: epochMs,
    updatedAt: epochMs,
    reservedUntil: nullableEpochMs,
    lastError: nullableStr,
    url: { ...nullableStr, description: "the task's own push URL, or null" },
    priority: { type: 'integer', minimum: MIN_PRIORITY, maximum: MAX_PRIORITY, description: 'among due tasks of its topic, higher is delivered first (0 by default)' },
    history: {
      type: 'array',
      maxItems: HISTORY_LIMIT,
      description: `the task's last attempts, oldest first (at most ${HISTORY_LIMIT}); empty for a task written before history was kept`,
      items: attemptSchema,
    },
    traceparent: { type: 'string', description: 'W3C traceparent of the call that scheduled the task, as its deliveries carry it; absent for none' },
    tracestate: { type: 'string', description: 'W3C tracestate that came with traceparent; absent for none' },
  },
  ['id', 'topic', 'payload', 'runAt', 'state', 'attempts', 'maxAttempts', 'ttrMs', 'backoff', 'createdAt', 'updatedAt', 'reservedUntil', 'lastError', 'url', 'priority', 'history'],
);

export const deliverySchema = object(
  {
    id: str,
    topic: str,
    payload: anyJson,
    runAt: epochMs,
    attempt: int,
    maxAttempts: int,
    receipt: { type: 'string', description: 'ack or nack with this before reservedUntil, or the task is delivered again' },
    reservedUntil: epochMs,
    traceparent: { type: 'string', description: 'W3C traceparent of the call that scheduled the task (its span, when delayq made one): start your span as its child; absent for none' },
    tracestate: { type: 'string', description: 'W3C tracestate that came with traceparent; absent for none' },
  },
  ['id', 'topic', 'payload', 'runAt', 'attempt', 'maxAttempts', 'receipt', 'reservedUntil'],
);

export const batchResultSchema = object({
  results: { type: 'array', description: 'one per task, in request order: scheduled, or why not', items: { oneOf: [scheduleResultSchema, errorSchema] } },
});

export const taskPageSchema = object({
  tasks: { type: 'array', items: taskSchema },
  next: { ...nullableStr, description: 'pass as `after` for the next page; null on the last' },
});

export const reserveResultSchema = object({ tasks: { type: 'array', items: deliverySchema } });

export const cancelResultSchema = object({ cancelled: yes });
export const cancelManyResultSchema = object({ results: { type: 'array', items: object({ id: str, cancelled: bool }) } });
export const rescheduleResultSchema = object({ id: str, runAt: epochMs });
export const ackResultSchema = object({ acked: yes });

const ackErrorSchema = object({
  id: str,
  error: object({ code: { type: 'string', enum: ['STALE_RECEIPT', 'TASK_NOT_FOUND'] }, message: str }),
});
export const ackManyResultSchema = object({
  results: { type: 'array', description: 'one per ack, in request order', items: { oneOf: [object({ id: str, acked: yes }), ackErrorSchema] } },
});

export const extendResultSchema = object({ reservedUntil: { ...epochMs, description: 'when the reservation now runs out' } });

export const nackResultSchema = {
  oneOf: [object({ state: { type: 'string', enum: ['pending'] }, runAt: epochMs }), object({ state: { type: 'string', enum: ['dead'] } })],
} as const;

export const retryResultSchema = object({ retried: yes });
export const retryDeadManyResultSchema = object({ retried: int, more: { type: 'boolean', description: 'dead tasks of the topic remain' } });
export const topicPauseResultSchema = object({ topic: str, paused: { type: 'boolean', description: 'the topic is paused now' }, changed: { type: 'boolean', description: 'false if it was so already' } });
export const topicLimitsSchema = object({
  rate: { type: 'integer', nullable: true, description: 'deliveries per periodMs; null: no rate limit' },
  periodMs: int,
  burst: { ...int, description: 'the most deliveries at once after an idle spell' },
  concurrency: { type: 'integer', nullable: true, description: 'the most deliveries in flight at once; null: no cap' },
});
export const topicLimitsResultSchema = object({ topic: str, limits: topicLimitsSchema });
export const topicPurgeResultSchema = object({ purged: { ...int, description: 'tasks deleted' } });
export const cancelDeadManyResultSchema = object({ cancelled: int, more: { type: 'boolean', description: 'dead tasks of the topic remain' } });

const stateCounts = object(Object.fromEntries(TASK_STATES.map((state) => [state, int])) as Record<(typeof TASK_STATES)[number], typeof int>);
const partialStateCounts = { ...stateCounts, required: [] as string[] };
const pushCounts = {
  sent: int,
  ok: int,
  failed: mapOf(int, 'failed attempts by class: timeout, connection, refused, aborted, http5xx, http429, http4xx, http3xx, unsigned'),
  deferred: int,
  noSlot: int,
} as const;
const pushCountsRequired = ['sent', 'ok', 'failed', 'deferred'] as const;
const breakerSchema = object({ state: { type: 'string', enum: ['closed', 'open', 'half-open'] }, consecutiveFailures: int, openUntil: nullableEpochMs });

export const statsSchema = object(
  {
    store: str,
    counts: stateCounts,
    topics: mapOf(partialStateCounts, 'tasks by state, per topic of this page'),
    unavailable: {
      type: 'array',
      description: 'the partitions (shards) of a shared store that cannot take writes now, as this server found them: their tasks wait, the others are delivered',
      maxItems: 256,
      items: object({ partition: int, since: { ...int, description: 'ms since the epoch: the first write that failed' }, error: str }),
    },
    timers: int,
    ready: mapOf(int, 'due tasks waiting for a consumer, per topic of this page'),
    oldestReady: mapOf(int, "runAt of each topic's longest-waiting ready task (a hint)"),
    waiting: int,
    paused: { type: 'array', description: 'every paused topic (delivering nothing until resumed), in name order', maxItems: 100_000, items: str },
    limits: mapOf(topicLimitsSchema, 'the flow limits of each limited topic of this page'),
    throttled: mapOf(int, "per topic of this page: deliveries that waited for the topic's limits (refused admissions) since the server started"),
    lateness: object({ count: int, p50: { type: 'number' }, p99: { type: 'number' }, p999: { type: 'number' }, max: { type: 'number' } }),
    push: object({
      topics: mapOf(object(pushCounts, pushCountsRequired)),
      origins: mapOf(object({ ...pushCounts, breaker: breakerSchema }, [...pushCountsRequired, 'breaker'])),
    }),
    readyTotal: int,
    topicsNext: { ...nullableStr, description: 'pass as `after` for the next page of topics; null on the last' },
    topicCount: int,
  },
  ['store', 'counts', 'topics', 'unavailable', 'timers', 'ready', 'oldestReady', 'waiting', 'paused', 'limits', 'throttled', 'lateness', 'readyTotal', 'topicsNext', 'topicCount'],
);

export const healthSchema = object({ status: { type: 'string', enum: ['ok', 'closing'] } });

export const readySchema = object({ status: { type: 'string', enum: ['ready'] } });
/** GET /readyz not ready: `{status}` alone, and why (the error envelope's fields) only for a request with the server's token. */
export const notReadySchema = object(
  {
    status: { type: 'string', enum: ['not ready'] },
    error: object({ code: { type: 'string' }, message: { type: 'string' } }),
  },
  ['status'],
);

export const timelineSchema = object({
  from: epochMs,
  to: epochMs,
  bucketMs: int,
  topic: nullableStr,
  counts: { type: 'array', items: int },
  coveredUntil: { ...epochMs, description: 'complete for runAt < coveredUntil' },
});

const counters = object({ scheduled: int, delivered: int, acked: int, failed: int, dead: int, cancelled: int });
export const activitySchema = object({
  at: epochMs,
  startedAt: epochMs,
  version: str,
  store: str,
  activity: {
    ...object({ totals: counters, topics: mapOf(counters), lateness: object({ le: { type: 'array', items: { type: 'number' } }, counts: { type: 'array', items: int } }) }),
    nullable: true,
    description: 'null when the server keeps no metrics',
  },
  pushFailures: mapOf(object({ at: epochMs, error: str }), 'the last failed push, per topic (of the page of topics)'),
  topicsNext: { ...nullableStr, description: 'pass as `after` for the next page of topics; null on the last' },
  topicCount: { ...int, description: 'the topics of activity.topics and pushFailures in all' },
});

export const pushSubscriptionSchema = object({
  topic: str,
  url: str,
  secrets: { type: 'array', items: object({ secret: { type: 'string', description: 'masked' }, expiresAt: nullableEpochMs }) },
  timeoutMs: int,
  concurrency: int,
  headers: mapOf(str),
  createdAt: epochMs,
  updatedAt: epochMs,
});
export const pushSubscriptionResultSchema = object(
  { subscription: pushSubscriptionSchema, secret: { type: 'string', description: 'the full secret, only when the request gave one or one was generated' } },
  ['subscription'],
);
export const pushListSchema = object({
  subscriptions: { type: 'array', items: pushSubscriptionSchema },
  next: { ...nullableStr, description: 'pass as `after` for the next page; null on the last' },
});
export const deletedSchema = object({ deleted: yes });

export const recurringSchema = object({
  id: str,
  topic: str,
  payload: anyJson,
  cron: nullableStr,
  tz: str,
  everyMs: { type: 'integer', nullable: true },
  startAt: nullableEpochMs,
  endAt: nullableEpochMs,
  limit: { type: 'integer', nullable: true },
  misfire: { type: 'string', enum: ['skip', 'once', 'all'] },
  ttrMs: int,
  maxAttempts: int,
  backoff: backoffPolicySchema,
  url: nullableStr,
  priority: { type: 'integer', minimum: MIN_PRIORITY, maximum: MAX_PRIORITY, description: 'the priority of every occurrence (0 by default)' },
  paused: bool,
  nextAt: { ...nullableEpochMs, description: 'the next occurrence not yet created as a task; null once the schedule has ended' },
  lastAt: { ...nullableEpochMs, description: 'the latest occurrence created (task id `<id>:<lastAt>`)' },
  count: int,
  createdAt: epochMs,
  updatedAt: epochMs,
});
export const recurringResultSchema = object({ schedule: recurringSchema, changed: { type: 'boolean', description: 'PUT only: false when nothing changed' } }, ['schedule']);
export const recurringManyResultSchema = object({ results: { type: 'array', items: object({ schedule: recurringSchema, created: bool, changed: bool }) } });
export const recurringPageSchema = object({ schedules: { type: 'array', items: recurringSchema }, next: nullableStr });
export const recurringNextSchema = object({ times: { type: 'array', items: epochMs } });

/** Free-form JSON (this document). */
export const anyObjectSchema = { type: 'object', additionalProperties: true } as const;

/** The names the document gives these schemas (components/schemas), each answered by name. */
export const NAMED_SCHEMAS: Readonly<Record<string, object>> = {
  Error: errorSchema,
  Task: taskSchema,
  Delivery: deliverySchema,
  ScheduleResult: scheduleResultSchema,
  BackoffPolicy: backoffPolicySchema,
  PushSubscription: pushSubscriptionSchema,
  RecurringSchedule: recurringSchema,
  Stats: statsSchema,
};
