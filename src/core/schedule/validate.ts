/**
 * Checks a schedule definition (what `upsert` is given) and resolves it into the
 * RecurringScheduleDefinition stored: every rule problem is INVALID_SCHEDULE with the reason (the
 * cron parser's own message for a bad pattern); topic, id, payload and task options fail
 * with the codes tasks use. Nothing is stored when this throws.
 *
 * Every string is bounded before it is used (a cron pattern at MAX_CRON_LENGTH, before the
 * parser sees it; a time zone at MAX_TZ_LENGTH), startAt and endAt are times a Date can
 * hold, read strictly (src/core/time.ts), and a schedule must have an occurrence from now
 * on: `endAt` already past, or a rule whose first occurrence at or after max(now, startAt)
 * is at or after endAt, is refused rather than stored to never fire.
 */
import { DelayQError } from '../errors.js';
import { validatePushUrl } from '../push-input.js';
import { shown, shownKey } from '../shown.js';
import type { BackoffPolicy } from '../task/model.js';
import {
  DEFAULT_LIMITS,
  DEFAULT_TASK_DEFAULTS,
  validateBackoff,
  validateId,
  validateIntOption,
  validatePriority,
  validateTopic,
  type Limits,
  type TaskDefaults,
} from '../task/validate.js';
import { serializePayload } from '../task/payload.js';
import { parseTime, type TimeInput } from '../time.js';
import {
  DEFAULT_MISFIRE,
  DEFAULT_SCHEDULE_PAGE,
  MAX_CRON_LENGTH,
  MAX_SCHEDULE_ID_LENGTH,
  MAX_SCHEDULE_PAGE,
  MAX_TZ_LENGTH,
  MIN_EVERY_MS,
  MISFIRE_POLICIES,
  type MisfirePolicy,
  type RecurringScheduleDefinition,
} from './model.js';
import { compileRule, type CronCompiler } from './rule.js';
import { isKnownTimeZone } from './zone.js';

/** A recurring schedule as a caller defines it (its id is given separately). */
export interface RecurringScheduleInput {
  topic: string;
  payload?: unknown;
  /** 5 fields (minute precision) or 6 (with seconds first). Give this or `everyMs`. */
  cron?: string;
  /** IANA time zone of `cron` (default 'UTC'). */
  tz?: string;
  /** A fixed interval, at least 1000 ms. Give this or `cron`. */
  everyMs?: number;
  startAt?: TimeInput;
  endAt?: TimeInput;
  limit?: number;
  misfire?: MisfirePolicy;
  ttrMs?: number;
  maxAttempts?: number;
  backoff?: Partial<BackoffPolicy>;
  /**
   * Push every occurrence to this URL, whatever its topic (a task's own `url`, docs/push.md):
   * checked like a task's (INVALID_URL, the SSRF rules, PUSH_NO_SECRET) at upsert.
   */
  url?: string;
  /** The priority of every occurrence: an integer from -100 to 100, default 0 (a task's `priority`). */
  priority?: number;
}

/** The fields of a definition that make its rule: when it fires (what `preview` takes). */
export type RecurringRuleInput = Pick<RecurringScheduleInput, 'cron' | 'tz' | 'everyMs' | 'startAt' | 'endAt' | 'limit'>;

/** A rule checked and resolved: the rule fields of a RecurringScheduleDefinition. */
export type RecurringRule = Pick<RecurringScheduleDefinition, 'cron' | 'tz' | 'everyMs' | 'startAt' | 'endAt' | 'limit'>;

const RULE_KEYS = new Set(['cron', 'tz', 'everyMs', 'startAt', 'endAt', 'limit']);
const KEYS = new Set([...RULE_KEYS, 'topic', 'payload', 'misfire', 'ttrMs', 'maxAttempts', 'backoff', 'url', 'priority']);
/** The largest limit: a schedule's occurrences are counted in a double. */
const MAX_LIMIT = 1_000_000_000;
/** Ten years of milliseconds: no interval longer than the longest delay. */
const MAX_EVERY_MS = DEFAULT_LIMITS.maxDelayMs;

function invalid(field: string, problem: string): never {
  throw new DelayQError('INVALID_SCHEDULE', `${field}: ${problem}`, { field });
}

export function validateScheduleId(id: unknown, limits: Limits = DEFAULT_LIMITS): string {
  return validateId(id, { ...limits, maxIdLength: Math.min(limits.maxIdLength, MAX_SCHEDULE_ID_LENGTH) });
}

/** Which page of schedules to list: after `afterId` (a schedule id), at most `limit`. */
export interface SchedulePageQuery {
  readonly afterId: string | null;
  readonly limit: number;
}

/** A listing's page options, checked (INVALID_ID, INVALID_OPTION) and defaulted (DEFAULT_SCHEDULE_PAGE). */
export function validateSchedulePage(options: { afterId?: unknown; limit?: unknown }, limits: Limits = DEFAULT_LIMITS): SchedulePageQuery {
  return {
    afterId: options.afterId === undefined ? null : validateScheduleId(options.afterId, limits),
    limit: options.limit === undefined ? DEFAULT_SCHEDULE_PAGE : validateIntOption(options.limit, 'limit', 1, MAX_SCHEDULE_PAGE),
  };
}

/** Checks schedule `id`'s definition at time `now` (an upsert's clock reading). */
export function validateRecurring(
  id: unknown,
  input: unknown,
  compile: CronCompiler,
  now: number,
  limits: Limits = DEFAULT_LIMITS,
  defaults: TaskDefaults = DEFAULT_TASK_DEFAULTS,
): RecurringScheduleDefinition {
  const scheduleId = validateScheduleId(id, limits);
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new DelayQError('INVALID_ARGUMENT', 'schedule: must be an object', { field: 'schedule' });
  const given = input as Record<string, unknown>;
  for (const key of Object.keys(given))
    if (!KEYS.has(key)) throw new DelayQError('INVALID_ARGUMENT', `schedule.${shownKey(key)}: unknown field`, { field: `schedule.${shownKey(key)}` });
  const topic = validateTopic(given['topic'], limits);
  const payload = serializePayload(given['payload'], limits);

  const { cron, tz, everyMs, startAt, endAt, limit } = readRule(given, compile, now);
  const misfire = given['misfire'] ?? DEFAULT_MISFIRE;
  if (!MISFIRE_POLICIES.includes(misfire as MisfirePolicy)) invalid('misfire', `must be one of ${MISFIRE_POLICIES.join(', ')} (got ${shown(misfire)})`);

  const ttrMs = given['ttrMs'] === undefined ? defaults.ttrMs : validateIntOption(given['ttrMs'], 'ttrMs', 1, limits.maxTtrMs);
  const maxAttempts = given['maxAttempts'] === undefined ? defaults.maxAttempts : validateIntOption(given['maxAttempts'], 'maxAttempts', 1, limits.maxAttempts);
  const backoff = validateBackoff(given['backoff'], defaults.backoff);
  const url = given['url'] === undefined || given['url'] === null ? null : validatePushUrl(given['url']);
  const priority = validatePriority(given['priority']);
  const definition: RecurringScheduleDefinition = {
    id: scheduleId,
    topic,
    payload,
    cron,
    tz,
    everyMs,
    startAt,
    endAt,
    limit,
    misfire: misfire as MisfirePolicy,
    ttrMs,
    maxAttempts,
    backoff,
    url,
    priority,
  };
  return definition;
}

/**
 * Checks a rule alone (`schedules.preview`, POST /v1/schedules/preview): the same checks and
 * messages as the rule of a definition at upsert, at time `now`; no topic, nothing stored.
 */
export function validateRecurringRule(input: unknown, compile: CronCompiler, now: number): RecurringRule {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new DelayQError('INVALID_ARGUMENT', 'rule: must be an object', { field: 'rule' });
  const given = input as Record<string, unknown>;
  for (const key of Object.keys(given))
    if (!RULE_KEYS.has(key)) throw new DelayQError('INVALID_ARGUMENT', `rule.${shownKey(key)}: unknown field (a rule has ${[...RULE_KEYS].join(', ')})`, { field: `rule.${shownKey(key)}` });
  return readRule(given, compile, now);
}

/** The rule fields of `given`, checked at time `now`; a rule with no occurrence from now on is refused. */
function readRule(given: Record<string, unknown>, compile: CronCompiler, now: number): RecurringRule {
  const cronGiven = given['cron'] !== undefined && given['cron'] !== null;
  const everyGiven = given['everyMs'] !== undefined && given['everyMs'] !== null;
  if (cronGiven === everyGiven) invalid('cron', cronGiven ? 'give cron or everyMs, not both' : 'give cron or everyMs');
  let cron: string | null = null;
  let everyMs: number | null = null;
  let tz = 'UTC';
  if (cronGiven) {
    if (typeof given['cron'] !== 'string' || given['cron'].trim() === '') invalid('cron', 'must be a non-empty string');
    if (given['cron'].length > MAX_CRON_LENGTH) invalid('cron', `must be at most ${MAX_CRON_LENGTH} characters (got ${given['cron'].length})`);
    cron = given['cron'].trim().replace(/\s+/g, ' ');
    if (given['tz'] !== undefined) {
      if (typeof given['tz'] !== 'string' || given['tz'] === '') invalid('tz', 'must be an IANA time zone name');
      if (given['tz'].length > MAX_TZ_LENGTH) invalid('tz', `must be at most ${MAX_TZ_LENGTH} characters (got ${given['tz'].length})`);
      if (!isKnownTimeZone(given['tz'])) invalid('tz', `unknown time zone ${JSON.stringify(given['tz'])}`);
      tz = given['tz'];
    }
    try {
      compile(cron);
    } catch (error) {
      invalid('cron', `${JSON.stringify(cron)} is not a valid pattern: ${error instanceof Error ? error.message : String(error)}`);
    }
  } else {
    const every = given['everyMs'];
    if (typeof every !== 'number' || !Number.isInteger(every) || every < MIN_EVERY_MS || every > MAX_EVERY_MS)
      invalid('everyMs', `must be an integer from ${MIN_EVERY_MS} to ${MAX_EVERY_MS} (got ${shown(every)})`);
    everyMs = every;
    if (given['tz'] !== undefined && given['tz'] !== 'UTC') invalid('tz', 'applies to cron schedules only');
  }

  const startAt = optionalTime(given['startAt'], 'startAt');
  const endAt = optionalTime(given['endAt'], 'endAt');
  if (startAt !== null && endAt !== null && endAt <= startAt) invalid('endAt', 'must be after startAt');
  if (endAt !== null && endAt <= now) invalid('endAt', `is already past (now is ${now}): the schedule has no occurrence from now on`);
  let limit: number | null = null;
  if (given['limit'] !== undefined && given['limit'] !== null) {
    const l = given['limit'];
    if (typeof l !== 'number' || !Number.isInteger(l) || l < 1 || l > MAX_LIMIT) invalid('limit', `must be an integer from 1 to ${MAX_LIMIT} (got ${shown(l)})`);
    limit = l;
  }
  const rule: RecurringRule = { cron, tz, everyMs, startAt, endAt, limit };
  // A rule that never fires again (`0 0 30 2 *`, or endAt before its next occurrence) is refused too.
  const first = compileRule(rule, compile)(now - 1);
  if (first === null) invalid(cron !== null && endAt === null ? 'cron' : 'endAt', 'the schedule has no occurrence from now on');
  return rule;
}

function optionalTime(value: unknown, field: string): number | null {
  if (value === undefined || value === null) return null;
  try {
    return parseTime(value, field);
  } catch (error) {
    invalid(field, error instanceof Error ? error.message.replace(`${field}: `, '') : 'is not a time');
  }
}
