/**
 * Input validation for everything a caller hands the queue. One message format:
 * "<field>: <what is wrong> (got <value>)". Every failure is a DelayQError with a stable
 * code; validation runs before any store is touched, so a bad call changes nothing.
 */
import { DelayQError } from '../errors.js';
import { ENGINE_OPTIONS } from '../option-table/engine.js';
import { fail } from './invalid.js';
import { serializePayload } from './payload.js';
import { isAttemptOutcome } from './history.js';
import { type AckRequest, type DueHistogramQuery, type ListFilter, type StoreNackOptions, type TopicPurgeState } from '../ports/index.js';
import { DUE_HISTOGRAM_GRAIN_MS } from '../due-histogram.js';
import { validatePushUrl } from '../push-input.js';
import { shownKey } from '../shown.js';
import { MAX_ERROR_LENGTH, storableText } from '../text.js';
import { parseTime, type TimeInput } from '../time.js';
import { traceOf } from '../trace-context.js';
import { DEFAULT_BACKOFF } from './backoff.js';
import { TASK_STATES, type BackoffPolicy, type NewTaskRecord, type TaskState } from './model.js';

export interface Limits {
  /** Serialised payload size limit in bytes. Default 1 MiB. */
  readonly maxPayloadBytes: number;
  /** Longest allowed delay from now. Default 10 years (365.25-day years). */
  readonly maxDelayMs: number;
  readonly maxTopicLength: number;
  readonly maxIdLength: number;
  readonly maxBatch: number;
  readonly maxTtrMs: number;
  readonly maxAttempts: number;
  /**
   * Deepest nesting of objects and arrays in a payload (a bare value is depth 0, `{}` and
   * `[]` depth 1). Checked before the payload is serialised, by a walk that stops at the limit, so a payload
   * nested 100,000 deep is PAYLOAD_TOO_DEEP, not a stack overflow. Default 128, at most 1,000.
   */
  readonly maxPayloadDepth: number;
}

/** The highest `maxPayloadDepth` a caller may set: JSON.stringify recurses once per level. */
export const MAX_PAYLOAD_DEPTH: number = ENGINE_OPTIONS['limits.maxPayloadDepth'].max;

const limit = (key: keyof Limits): number => ENGINE_OPTIONS[`limits.${key}`].default;

/** The defaults, from the options table (core/option-table/engine.ts). */
export const DEFAULT_LIMITS: Limits = {
  maxPayloadBytes: limit('maxPayloadBytes'),
  maxDelayMs: limit('maxDelayMs'),
  maxTopicLength: limit('maxTopicLength'),
  maxIdLength: limit('maxIdLength'),
  maxBatch: limit('maxBatch'),
  maxTtrMs: limit('maxTtrMs'),
  maxAttempts: limit('maxAttempts'),
  maxPayloadDepth: limit('maxPayloadDepth'),
};

export interface TaskDefaults {
  readonly ttrMs: number;
  readonly maxAttempts: number;
  readonly backoff: BackoffPolicy;
}

export const DEFAULT_TASK_DEFAULTS: TaskDefaults = { ttrMs: ENGINE_OPTIONS['defaults.ttrMs'].default, maxAttempts: ENGINE_OPTIONS['defaults.maxAttempts'].default, backoff: DEFAULT_BACKOFF };

export interface ScheduleInput {
  topic: string;
  payload?: unknown;
  /** Delay from now in ms (integer >= 0). Give this or `runAt`, not both; neither means now. */
  delayMs?: number;
  runAt?: TimeInput;
  /** Idempotency key: scheduling an id that exists returns the existing task. */
  id?: string;
  ttrMs?: number;
  maxAttempts?: number;
  backoff?: Partial<BackoffPolicy>;
  /**
   * Push this task to this URL when due, whatever its topic (docs/push.md, "Per-task
   * url"), signed with the topic's subscription secret or the queue's default push secret.
   * Pull consumers never receive it.
   */
  url?: string;
  /**
   * The W3C `traceparent` of the caller's span: kept with the task and carried to its
   * deliveries (docs/library.md, "Trace context"). A malformed one is ignored, not refused.
   */
  traceparent?: string;
  /** The W3C `tracestate` that goes with `traceparent`; ignored without it, or when malformed or over 512 characters. */
  tracestate?: string;
  /**
   * Among due tasks of its topic, a higher priority is delivered first (runAt order within
   * one priority); an integer from MIN_PRIORITY to MAX_PRIORITY, default 0. It never makes a
   * task due earlier (docs/library.md, "Priorities"; ADR 0057).
   */
  priority?: number;
}

export interface WhenInput {
  delayMs?: number;
  runAt?: TimeInput;
}

const NAME_PATTERN = /^[A-Za-z0-9._:-]+$/;
/**
 * `.` and `..` would be path segments in the routes (/v1/tasks/..), which browsers and URL
 * libraries resolve away, escaped or not: such a task could not be read or acked over HTTP.
 */
const DOT_SEGMENT_REASON = 'must not be "." or ".." (a URL path would resolve them away)';
const isDotSegment = (name: string): boolean => name === '.' || name === '..';
const SCHEDULE_KEYS = new Set(['topic', 'payload', 'delayMs', 'runAt', 'id', 'ttrMs', 'maxAttempts', 'backoff', 'url', 'traceparent', 'tracestate', 'priority']);
const WHEN_KEYS = new Set(['delayMs', 'runAt']);
const BACKOFF_KEYS = new Set(['baseMs', 'factor', 'maxMs', 'jitter']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function rejectUnknownKeys(input: Record<string, unknown>, allowed: ReadonlySet<string>, what: string): void {
  for (const key of Object.keys(input)) {
    if (!allowed.has(key)) fail('INVALID_ARGUMENT', `${what}.${shownKey(key)}`, 'unknown field');
  }
}

export function validateTopic(topic: unknown, limits: Limits = DEFAULT_LIMITS): string {
  if (typeof topic !== 'string' || topic.length === 0) fail('INVALID_TOPIC', 'topic', 'must be a non-empty string', topic);
  if (topic.length > limits.maxTopicLength)
    fail('INVALID_TOPIC', 'topic', `must be at most ${limits.maxTopicLength} characters`, topic);
  if (!NAME_PATTERN.test(topic)) fail('INVALID_TOPIC', 'topic', 'may contain only A-Z a-z 0-9 . _ : -', topic);
  if (isDotSegment(topic)) fail('INVALID_TOPIC', 'topic', DOT_SEGMENT_REASON, topic);
  return topic;
}

export function validateId(id: unknown, limits: Limits = DEFAULT_LIMITS): string {
  if (typeof id !== 'string' || id.length === 0) fail('INVALID_ID', 'id', 'must be a non-empty string', id);
  if (id.length > limits.maxIdLength) fail('INVALID_ID', 'id', `must be at most ${limits.maxIdLength} characters`, id);
  if (!NAME_PATTERN.test(id)) fail('INVALID_ID', 'id', 'may contain only A-Z a-z 0-9 . _ : -', id);
  if (isDotSegment(id)) fail('INVALID_ID', 'id', DOT_SEGMENT_REASON, id);
  return id;
}

/** Resolves `{delayMs} | {runAt}` against `now` into an absolute, bounded runAt. */
export function resolveRunAt(input: WhenInput, now: number, limits: Limits = DEFAULT_LIMITS): number {
  const hasDelay = input.delayMs !== undefined;
  const hasRunAt = input.runAt !== undefined;
  if (hasDelay && hasRunAt) fail('INVALID_DELAY', 'delayMs', 'give delayMs or runAt, not both');
  let runAt = now;
  if (hasDelay) {
    const delay = input.delayMs;
    if (typeof delay !== 'number' || !Number.isFinite(delay))
      fail('INVALID_DELAY', 'delayMs', 'must be a finite number', delay);
    if (!Number.isInteger(delay) || delay < 0)
      fail('INVALID_DELAY', 'delayMs', 'must be a whole, non-negative number of ms', delay);
    if (delay > limits.maxDelayMs) fail('INVALID_DELAY', 'delayMs', `must be at most ${limits.maxDelayMs} ms`, delay);
    runAt = now + delay;
  } else if (hasRunAt) {
    runAt = parseTime(input.runAt);
    if (runAt - now > limits.maxDelayMs)
      fail('INVALID_DELAY', 'runAt', `must be at most ${limits.maxDelayMs} ms from now`, input.runAt);
  }
  return runAt;
}

export function validateWhen(input: unknown, now: number, limits: Limits = DEFAULT_LIMITS): number {
  if (!isPlainObject(input)) fail('INVALID_ARGUMENT', 'when', 'must be an object with delayMs or runAt', input);
  rejectUnknownKeys(input, WHEN_KEYS, 'when');
  if (input['delayMs'] === undefined && input['runAt'] === undefined)
    fail('INVALID_DELAY', 'delayMs', 'give delayMs or runAt');
  return resolveRunAt(input, now, limits);
}

function positiveInt(value: unknown, field: string, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max)
    fail('INVALID_OPTION', field, `must be an integer from 1 to ${max}`, value);
  return value;
}

export function validateBackoff(input: unknown, base: BackoffPolicy): BackoffPolicy {
  if (input === undefined) return base;
  if (!isPlainObject(input)) fail('INVALID_OPTION', 'backoff', 'must be an object', input);
  rejectUnknownKeys(input, BACKOFF_KEYS, 'backoff');
  const merged = { ...base, ...(input as Partial<BackoffPolicy>) };
  const { baseMs, factor, maxMs, jitter } = merged;
  if (!Number.isInteger(baseMs) || baseMs < 0) fail('INVALID_OPTION', 'backoff.baseMs', 'must be an integer >= 0', baseMs);
  if (!Number.isFinite(factor) || factor < 1 || factor > 100)
    fail('INVALID_OPTION', 'backoff.factor', 'must be a number from 1 to 100', factor);
  if (!Number.isInteger(maxMs) || maxMs < baseMs)
    fail('INVALID_OPTION', 'backoff.maxMs', 'must be an integer >= baseMs', maxMs);
  if (!Number.isFinite(jitter) || jitter < 0 || jitter > 1)
    fail('INVALID_OPTION', 'backoff.jitter', 'must be a number from 0 to 1', jitter);
  return { baseMs, factor, maxMs, jitter };
}

/**
 * Validates and defaults one schedule call into the record a store creates. `makeId`
 * supplies an id when none is given (the core has no randomness of its own).
 */
export function validateScheduleInput(
  input: unknown,
  now: number,
  makeId: () => string,
  limits: Limits = DEFAULT_LIMITS,
  defaults: TaskDefaults = DEFAULT_TASK_DEFAULTS,
): NewTaskRecord {
  if (!isPlainObject(input)) fail('INVALID_ARGUMENT', 'task', 'must be an object', input);
  rejectUnknownKeys(input, SCHEDULE_KEYS, 'task');
  const topic = validateTopic(input['topic'], limits);
  const id = input['id'] === undefined ? makeId() : validateId(input['id'], limits);
  const runAt = resolveRunAt(input, now, limits);
  const ttrMs = input['ttrMs'] === undefined ? defaults.ttrMs : positiveInt(input['ttrMs'], 'ttrMs', limits.maxTtrMs);
  const maxAttempts =
    input['maxAttempts'] === undefined
      ? defaults.maxAttempts
      : positiveInt(input['maxAttempts'], 'maxAttempts', limits.maxAttempts);
  const backoff = validateBackoff(input['backoff'], defaults.backoff);
  const payload = serializePayload(input['payload'], limits);
  const trace = input['traceparent'] === undefined ? undefined : traceInput(input['traceparent'], input['tracestate']);
  const priority = validatePriority(input['priority']);
  const task: NewTaskRecord =
    input['url'] === undefined
      ? trace === undefined ? { id, topic, payload, runAt, maxAttempts, ttrMs, backoff } : { id, topic, payload, runAt, maxAttempts, ttrMs, backoff, trace }
      : trace === undefined ? { id, topic, payload, runAt, maxAttempts, ttrMs, backoff, url: validatePushUrl(input['url']) } : { id, topic, payload, runAt, maxAttempts, ttrMs, backoff, url: validatePushUrl(input['url']), trace };
  // A task of priority 0 (the default) carries no field: it is stored as before (ADR 0057).
  return priority === 0 ? task : { ...task, priority };
}

/** The lowest and highest priority a task may have (ADR 0057). */
export const MIN_PRIORITY = -100;
export const MAX_PRIORITY = 100;

/** A task's priority: an integer from MIN_PRIORITY to MAX_PRIORITY; absent is 0. */
export function validatePriority(value: unknown, field = 'priority'): number {
  if (value === undefined) return 0;
  return validateIntOption(value, field, MIN_PRIORITY, MAX_PRIORITY);
}

/** A non-text value is a caller's mistake (refused); a text that is no W3C value is ignored (core/trace-context.ts). */
function traceInput(traceparent: unknown, tracestate: unknown): string | undefined {
  if (typeof traceparent !== 'string') fail('INVALID_OPTION', 'traceparent', 'must be a string', traceparent);
  if (tracestate !== undefined && typeof tracestate !== 'string') fail('INVALID_OPTION', 'tracestate', 'must be a string', tracestate);
  return traceOf(traceparent, tracestate);
}

export function validateBatch(tasks: unknown, limits: Limits = DEFAULT_LIMITS, field = 'tasks'): readonly unknown[] {
  if (!Array.isArray(tasks)) fail('INVALID_ARGUMENT', field, 'must be an array', tasks);
  if (tasks.length > limits.maxBatch)
    throw new DelayQError('BATCH_TOO_LARGE', `${field}: at most ${limits.maxBatch} in one batch (got ${tasks.length})`, {
      field,
      limit: limits.maxBatch,
    });
  return tasks;
}

export function validateIntOption(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    fail('INVALID_OPTION', field, `must be an integer from ${min} to ${max}`, value);
  return value;
}

/** The most tasks one reserve call may reserve. */
export const MAX_RESERVE = 1_000;
/** The longest a reserve call may wait. */
export const MAX_WAIT_MS = 60_000;

export function validateReceipt(receipt: unknown): string {
  if (typeof receipt !== 'string' || receipt.length === 0 || receipt.length > 200)
    fail('INVALID_ARGUMENT', 'receipt', 'must be a non-empty string');
  return receipt;
}

/** Runs `check` on item `index` of a batch argument, naming the item in any error it throws. */
function atIndex(field: string, index: number, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (error instanceof DelayQError)
      throw new DelayQError(error.code, `${field}[${index}]: ${error.message}`, { ...error.details, index }, { cause: error });
    throw error;
  }
}

/** A batch of ids (cancelMany): its size, then every id; the error names the first bad one's index. */
export function validateIdBatch(ids: unknown, limits: Limits = DEFAULT_LIMITS): readonly string[] {
  const batch = validateBatch(ids, limits, 'ids');
  for (let i = 0; i < batch.length; i++) atIndex('ids', i, () => validateId(batch[i], limits));
  return batch as readonly string[];
}

/**
 * A batch of acks (ackMany): its size, then every {id, receipt}. Only the id and receipt
 * come back: a topic given here would be the caller's word, not the task's, and must not
 * reach the store.
 */
export function validateAckBatch(acks: unknown, limits: Limits = DEFAULT_LIMITS): AckRequest[] {
  const batch = validateBatch(acks, limits, 'acks');
  return batch.map((ack, i) => {
    let request: AckRequest | undefined;
    atIndex('acks', i, () => {
      if (!isPlainObject(ack)) throw new DelayQError('INVALID_ARGUMENT', 'must be an object {id, receipt}', {});
      request = { id: validateId(ack['id'], limits), receipt: validateReceipt(ack['receipt']) };
    });
    return request!;
  });
}

export interface ReserveLimits {
  readonly max: number;
  readonly waitMs: number;
  readonly ttrMs: number | undefined;
}

/** A reserve call's options, defaulted: one task, no wait, each task's own ttrMs. */
export function validateReserveOptions(options: { max?: unknown; waitMs?: unknown; ttrMs?: unknown }, limits: Limits = DEFAULT_LIMITS): ReserveLimits {
  return {
    max: options.max === undefined ? 1 : validateIntOption(options.max, 'max', 1, MAX_RESERVE),
    waitMs: options.waitMs === undefined ? 0 : validateIntOption(options.waitMs, 'waitMs', 0, MAX_WAIT_MS),
    ttrMs: options.ttrMs === undefined ? undefined : validateIntOption(options.ttrMs, 'ttrMs', 1, limits.maxTtrMs),
  };
}

/** A list call's filter; the page size defaults to 100. */
export function validateListFilter(
  options: { topic?: unknown; state?: unknown; afterId?: unknown; limit?: unknown },
  limits: Limits = DEFAULT_LIMITS,
): ListFilter {
  if (options.topic !== undefined) validateTopic(options.topic, limits);
  if (options.state !== undefined && !TASK_STATES.includes(options.state as TaskState))
    fail('INVALID_ARGUMENT', 'state', `must be one of ${TASK_STATES.join(', ')}`);
  if (options.afterId !== undefined) validateId(options.afterId, limits);
  const limit = options.limit === undefined ? 100 : validateIntOption(options.limit, 'limit', 1, 10_000);
  return {
    ...(options.topic !== undefined ? { topic: options.topic as string } : {}),
    ...(options.state !== undefined ? { state: options.state as TaskState } : {}),
    ...(options.afterId !== undefined ? { afterId: options.afterId as string } : {}),
    limit,
  };
}

/** The most buckets one due-time histogram may have (a day by minute). */
export const MAX_DUE_HISTOGRAM_BUCKETS = 1_440;

/**
 * A due-time histogram's options, checked (INVALID_ARGUMENT): `bucketMs` (default one
 * minute) a whole number of minutes; `from` (default now; epoch ms, a Date or an ISO 8601
 * text, read strictly as parseTime reads it) rounded down to its minute; `to`
 * (default 60 buckets on) after it, with at most MAX_DUE_HISTOGRAM_BUCKETS buckets between.
 */
export function validateDueHistogramOptions(
  options: { from?: unknown; to?: unknown; bucketMs?: unknown; topic?: unknown },
  now: number,
  limits: Limits = DEFAULT_LIMITS,
): DueHistogramQuery {
  if (options.topic !== undefined) validateTopic(options.topic, limits);
  const bucketMs = options.bucketMs ?? DUE_HISTOGRAM_GRAIN_MS;
  if (typeof bucketMs !== 'number' || !Number.isSafeInteger(bucketMs) || bucketMs < DUE_HISTOGRAM_GRAIN_MS || bucketMs % DUE_HISTOGRAM_GRAIN_MS !== 0)
    fail('INVALID_ARGUMENT', 'bucketMs', `must be a whole number of minutes (a multiple of ${DUE_HISTOGRAM_GRAIN_MS})`, bucketMs);
  const time = (value: unknown, field: string): number => {
    try {
      return parseTime(value, field);
    } catch {
      fail('INVALID_ARGUMENT', field, 'must be a time: epoch ms or an ISO 8601 date-time with every field in range', value);
    }
  };
  const start = options.from === undefined ? now : time(options.from, 'from');
  const from = start - (start % DUE_HISTOGRAM_GRAIN_MS);
  const to = options.to === undefined ? from + 60 * bucketMs : time(options.to, 'to');
  if (to <= from) fail('INVALID_ARGUMENT', 'to', 'must be after from', to);
  if (Math.ceil((to - from) / bucketMs) > MAX_DUE_HISTOGRAM_BUCKETS)
    fail('INVALID_ARGUMENT', 'to', `at most ${MAX_DUE_HISTOGRAM_BUCKETS} buckets of bucketMs between from and to`, to);
  return { from, to, bucketMs, ...(options.topic !== undefined ? { topic: options.topic as string } : {}) };
}

/** The states a topic purge takes (TopicPurgeState): a purge names one. */
export const TOPIC_PURGE_STATES = ['pending', 'dead', 'completed'] as const satisfies readonly TopicPurgeState[];

export function validatePurgeState(state: unknown): TopicPurgeState {
  if (typeof state !== 'string' || !(TOPIC_PURGE_STATES as readonly string[]).includes(state))
    fail('INVALID_ARGUMENT', 'state', `must be one of ${TOPIC_PURGE_STATES.join(', ')}`, state);
  return state as TopicPurgeState;
}

/**
 * Validates a schedule call's tasks, all before any is stored: one bad task rejects the
 * whole call, its index in the message and in `details.index` when there are several.
 */
export function validateScheduleBatch(
  inputs: unknown,
  now: number,
  makeId: () => string,
  limits: Limits = DEFAULT_LIMITS,
  defaults: TaskDefaults = DEFAULT_TASK_DEFAULTS,
): NewTaskRecord[] {
  const batch = validateBatch(inputs, limits);
  return batch.map((input, index) => {
    try {
      return validateScheduleInput(input, now, makeId, limits, defaults);
    } catch (error) {
      if (error instanceof DelayQError && batch.length > 1)
        throw new DelayQError(error.code, `tasks[${index}].${error.message}`, { ...error.details, index }, { cause: error });
      throw error;
    }
  });
}

/** A nack's options as the store takes them; `random` is the jitter draw for its backoff. */
export function validateNackOptions(options: { delayMs?: unknown; error?: string; outcome?: string }, random: number, limits: Limits = DEFAULT_LIMITS): StoreNackOptions {
  return {
    ...(options.delayMs !== undefined ? { delayMs: validateIntOption(options.delayMs, 'delayMs', 0, limits.maxDelayMs) } : {}),
    ...(options.error !== undefined ? { error: storableText(String(options.error), MAX_ERROR_LENGTH) } : {}),
    // The engine's own (the Pusher's push classes): one the stores cannot keep is recorded as `nacked`.
    ...(options.outcome !== undefined && isAttemptOutcome(options.outcome) ? { outcome: options.outcome } : {}),
    random,
  };
}

/** An extension's options: the new reservation's length (ttrMs), or each task's own. */
export function validateExtendOptions(options: unknown, limits: Limits = DEFAULT_LIMITS): { ttrMs: number | undefined } {
  if (options === undefined) return { ttrMs: undefined };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) fail('INVALID_ARGUMENT', 'options', 'must be an object', options);
  const ttrMs = (options as { ttrMs?: unknown }).ttrMs;
  return { ttrMs: ttrMs === undefined ? undefined : validateIntOption(ttrMs, 'ttrMs', 1, limits.maxTtrMs) };
}

/** The longest a handler's timeoutMs may be (Node's longest timer, ~24.8 days). */
export const MAX_HANDLER_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * A worker's options, defaulted: 10 handlers at once, each task's own ttrMs, no time limit.
 * `timeoutMs` is a number of ms or a function of the delivery (checked per task when it runs).
 */
export function validateWorkOptions<F extends (...args: never[]) => unknown>(
  options: { concurrency?: unknown; ttrMs?: unknown; timeoutMs?: number | F },
  limits: Limits = DEFAULT_LIMITS,
): { concurrency: number; ttrMs: number | undefined; timeoutMs: number | F | undefined } {
  const timeoutMs = options.timeoutMs;
  return {
    concurrency: options.concurrency === undefined ? 10 : validateIntOption(options.concurrency, 'concurrency', 1, 10_000),
    ttrMs: options.ttrMs === undefined ? undefined : validateIntOption(options.ttrMs, 'ttrMs', 1, limits.maxTtrMs),
    timeoutMs: timeoutMs === undefined || typeof timeoutMs === 'function' ? timeoutMs : validateIntOption(timeoutMs, 'timeoutMs', 1, MAX_HANDLER_TIMEOUT_MS),
  };
}

/** How long a close waits for running handlers: 0 .. MAX_HANDLER_TIMEOUT_MS ms, or undefined for as long as they run. */
export function validateCloseOptions(options: unknown): { timeoutMs: number | undefined } {
  if (options === undefined) return { timeoutMs: undefined };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) fail('INVALID_ARGUMENT', 'options', 'must be an object', options);
  const timeoutMs = (options as { timeoutMs?: unknown }).timeoutMs;
  return { timeoutMs: timeoutMs === undefined ? undefined : validateIntOption(timeoutMs, 'timeoutMs', 0, MAX_HANDLER_TIMEOUT_MS) };
}
