/**
 * JSON schemas for request shapes: types and unknown fields only. Semantics (patterns,
 * ranges, the 10-year delay bound) stay with the core validators, so the library and the
 * API share one rule and one message for each; validation-errors.ts maps a schema failure
 * to the same code the core would use for that field. Path and query parameters are declared
 * with each route (route-schema.ts), the answers in response-schemas.ts.
 */
import { MAX_FLOW_CONCURRENCY, MAX_FLOW_PERIOD_MS, MAX_FLOW_RATE } from '../core/flow/limits.js';

const time = { anyOf: [{ type: 'number' }, { type: 'string' }], description: 'epoch ms or an ISO 8601 date-time' } as const;

export const backoffSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { baseMs: { type: 'number' }, factor: { type: 'number' }, maxMs: { type: 'number' }, jitter: { type: 'number' } },
} as const;

export const scheduleBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['topic'],
  properties: {
    id: { type: 'string' },
    topic: { type: 'string' },
    payload: {},
    delayMs: { type: 'number' },
    runAt: time,
    ttrMs: { type: 'number' },
    maxAttempts: { type: 'number' },
    backoff: backoffSchema,
    url: { type: 'string', description: 'push this task to this URL when due, whatever its topic (docs/push.md)' },
    priority: { type: 'number', description: 'an integer from -100 to 100 (default 0): among due tasks of the topic, higher is delivered first; never earlier than runAt (400 INVALID_OPTION outside)' },
  },
} as const;

/** Items are checked one by one by the core, so one bad task fails alone (results[i].error). */
export const batchBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['tasks'],
  properties: { tasks: { type: 'array', items: {} } },
} as const;

export const cancelManyBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['ids'],
  properties: { ids: { type: 'array', items: { type: 'string' } } },
} as const;

export const rescheduleBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { delayMs: { type: 'number' }, runAt: time },
} as const;

export const reserveBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { max: { type: 'number' }, waitMs: { type: 'number' }, ttrMs: { type: 'number' } },
} as const;

export const ackBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['receipt'],
  properties: { receipt: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

export const ackManyBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['acks'],
  properties: {
    acks: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'receipt'],
        properties: { id: { type: 'string' }, receipt: { type: 'string', minLength: 1, maxLength: 200 } },
      },
    },
  },
} as const;

export const extendBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['receipt'],
  properties: { receipt: { type: 'string', minLength: 1, maxLength: 200 }, ttrMs: { type: 'number', description: 'the reservation runs this long from now; default: the task\'s ttrMs' } },
} as const;

export const nackBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['receipt'],
  properties: { receipt: { type: 'string', minLength: 1, maxLength: 200 }, delayMs: { type: 'number' }, error: { type: 'string' } },
} as const;

export const pushBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { type: 'string' },
    secret: { type: 'string' },
    timeoutMs: { type: 'number' },
    concurrency: { type: 'number' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;

/**
 * PUT /v1/schedules/:id. The rule's fields carry no type here: the core checks them all
 * (INVALID_SCHEDULE with the reason), so the API and the library answer alike.
 */
export const scheduleDefinitionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['topic'],
  properties: {
    topic: { type: 'string' },
    payload: {},
    cron: { description: 'a cron pattern: 5 fields, or 6 with seconds first' },
    tz: { description: 'the IANA time zone of cron (default UTC)' },
    everyMs: { description: 'a fixed interval in ms, at least 1000 (give cron or everyMs)' },
    startAt: { description: 'epoch ms or an ISO 8601 date-time' },
    endAt: { description: 'epoch ms or an ISO 8601 date-time; no occurrence at or after it' },
    limit: { description: 'the most occurrences ever created' },
    misfire: { description: 'skip | once (default) | all: occurrences missed while no delayq process ran' },
    ttrMs: { type: 'number' },
    maxAttempts: { type: 'number' },
    backoff: backoffSchema,
    url: { type: 'string', description: 'push every occurrence to this URL, whatever its topic (docs/push.md); 400 INVALID_URL, PUSH_NO_SECRET' },
    priority: { type: 'number', description: 'the priority of every occurrence: an integer from -100 to 100 (default 0); 400 INVALID_OPTION outside' },
  },
} as const;

/** POST /v1/schedules/preview: a rule (the rule fields of a definition, checked by the core as at upsert) and how many times. */
export const schedulePreviewBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    cron: scheduleDefinitionSchema.properties.cron,
    tz: scheduleDefinitionSchema.properties.tz,
    everyMs: scheduleDefinitionSchema.properties.everyMs,
    startAt: { description: 'epoch ms or an ISO 8601 date-time; no occurrence before it (a later one previews from then)' },
    endAt: scheduleDefinitionSchema.properties.endAt,
    limit: { description: 'the most occurrences: at most this many times' },
    n: { type: 'number', description: 'how many times, 1 to 1000 (default 10)' },
  },
} as const;

/** PUT /v1/schedules: an array of definitions, each with its `id` (checked by the core, as PUT /v1/schedules/:id). */
export const scheduleDefinitionsSchema = {
  type: 'array',
  items: { type: 'object' },
} as const;

export const retryDeadBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { delayMs: { type: 'number' }, runAt: time },
} as const;

/** PUT /v1/topics/:topic/limits: the bounds of core/flow/limits.ts; the core checks how they combine. */
export const topicLimitsBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    rate: { type: 'integer', minimum: 1, maximum: MAX_FLOW_RATE, description: 'deliveries per periodMs' },
    periodMs: { type: 'integer', minimum: 1, maximum: MAX_FLOW_PERIOD_MS, description: 'the period of rate, in ms (default 1000); needs rate' },
    burst: { type: 'integer', minimum: 1, maximum: MAX_FLOW_RATE, description: 'the most deliveries at once after an idle spell (default rate); needs rate' },
    concurrency: { type: 'integer', minimum: 1, maximum: MAX_FLOW_CONCURRENCY, description: 'the most deliveries in flight at once' },
  },
} as const;

export const retryDeadManyBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { max: { type: 'number' } },
} as const;
