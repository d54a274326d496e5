/**
 * The engine's tuning options: what they mean, their defaults and their bounds, checked
 * like every other input (validate.ts's message format, INVALID_OPTION) before any part
 * of the engine starts. Only numbers live here; the engine's options type adds its ports
 * (clock, logger, randomness) and the task limits and defaults.
 */
import { DelayQError } from './errors.js';
import { BREAKER_DEFAULTS, type BreakerOptions } from './push-breaker.js';
import { DEFAULT_LIMITS, DEFAULT_TASK_DEFAULTS, MAX_PAYLOAD_DEPTH, validateBackoff, validateIntOption, type Limits, type TaskDefaults } from './task/validate.js';

/** The longest delay a Clock timer takes (Node's setTimeout fires at once beyond it). */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** The most push slots a process may have (`pushMaxInFlight`). */
export const MAX_PUSH_IN_FLIGHT = 1_000_000;

export interface LoaderOptions {
  /** Timers per loadDue call. Default 2,000. */
  readonly pageSize: number;
  /** Pause loading while more tasks than this wait for a consumer (no thundering herd). Default 10,000. */
  readonly maxReadyBacklog: number;
  /** Wait before retrying a failed load. Default 1 s. */
  readonly retryMs: number;
}

export const DEFAULT_LOADER_OPTIONS: LoaderOptions = { pageSize: 2_000, maxReadyBacklog: 10_000, retryMs: 1_000 };

/** The engine's numeric options, every one resolved. */
export interface EngineTuning {
  /** Timing-wheel precision in ms. Default 1. */
  readonly tickMs: number;
  /** Completed and cancelled tasks (and so their ids) are kept this long. Default 7 days. */
  readonly retentionMs: number;
  /** The janitor purges finished tasks past retention this often. Default 60 s. */
  readonly purgeIntervalMs: number;
  /** The most tasks one purge deletes (a bound on one store call). Default 10,000. */
  readonly purgeBatch: number;
  /**
   * A background store call that failed (expiring a reservation that ran out, promoting
   * due tasks to a shared store's ready lists) is retried after this long. Default 1 s.
   */
  readonly storeRetryMs: number;
  /**
   * How often the engine reads the push subscriptions again (those set through other
   * processes sharing the store; its own changes apply at once). Default 1 s.
   */
  readonly pushSyncMs: number;
  /**
   * How often the engine reads the paused topics again (those paused or resumed through
   * other processes sharing the store; its own changes apply at once): the most a pause
   * through another process takes to hold here (ADR 0040). Default 1 s.
   */
  readonly pauseSyncMs: number;
  /** The push circuit breaker per destination origin (docs/push.md): 5 failures, 30 s, 1 s. */
  readonly pushBreaker: BreakerOptions;
  /**
   * Pushes in flight at once in this process, shared fairly between the pushed topics
   * (docs/push.md, "Slots"; `push.maxInFlight` of DelayQueue.open). Default 256.
   */
  readonly pushMaxInFlight: number;
  /**
   * Recurring schedules (docs/cron.md): each occurrence is created once the one before it
   * is due within this long, so the next one is always a pending task ahead of its time.
   * Default 1.5 s: not a whole second, so planning falls between the whole seconds on which
   * most schedules fire (docs/adr/0024-schedule-loop.md).
   */
  readonly scheduleLeadMs: number;
  /**
   * An occurrence not created this long after its time was missed while no process ran:
   * the schedule's misfire policy decides what happens to it. Default 1 s.
   */
  readonly scheduleGraceMs: number;
  /**
   * How often the engine checks whether schedules changed through other processes (one
   * small read) and, when some did, reads every schedule again; its own changes apply at
   * once. Default 5 s.
   */
  readonly scheduleSyncMs: number;
  readonly loader: LoaderOptions;
}

export const DEFAULT_ENGINE_TUNING: EngineTuning = {
  tickMs: 1,
  retentionMs: 7 * 24 * 3600 * 1000,
  purgeIntervalMs: 60_000,
  purgeBatch: 10_000,
  storeRetryMs: 1_000,
  pushSyncMs: 1_000,
  pauseSyncMs: 1_000,
  pushBreaker: BREAKER_DEFAULTS,
  pushMaxInFlight: 256,
  scheduleLeadMs: 1_500,
  scheduleGraceMs: 1_000,
  scheduleSyncMs: 5_000,
  loader: DEFAULT_LOADER_OPTIONS,
};

/** What a caller may give: any subset, with the loader's options partial too. */
export type EngineTuningInput = Partial<Omit<EngineTuning, 'loader' | 'pushBreaker'>> & {
  readonly loader?: Partial<LoaderOptions> | undefined;
  readonly pushBreaker?: Partial<BreakerOptions> | undefined;
};

/** Checks and defaults the engine's numbers; throws INVALID_OPTION naming the first bad one. */
export function resolveEngineTuning(input: EngineTuningInput): EngineTuning {
  const loader = input.loader ?? {};
  if (typeof loader !== 'object' || loader === null) throw new DelayQError('INVALID_OPTION', 'loader: must be an object', { field: 'loader' });
  const breaker = input.pushBreaker ?? {};
  if (typeof breaker !== 'object' || breaker === null) throw new DelayQError('INVALID_OPTION', 'pushBreaker: must be an object', { field: 'pushBreaker' });
  const pick = (value: number | undefined, fallback: number, field: string, min: number, max: number): number =>
    value === undefined ? fallback : validateIntOption(value, field, min, max);
  const d = DEFAULT_ENGINE_TUNING;
  return {
    tickMs: pick(input.tickMs, d.tickMs, 'tickMs', 1, 60_000),
    retentionMs: pick(input.retentionMs, d.retentionMs, 'retentionMs', 0, Number.MAX_SAFE_INTEGER),
    purgeIntervalMs: pick(input.purgeIntervalMs, d.purgeIntervalMs, 'purgeIntervalMs', 1, MAX_TIMER_DELAY_MS),
    purgeBatch: pick(input.purgeBatch, d.purgeBatch, 'purgeBatch', 1, 1_000_000),
    storeRetryMs: pick(input.storeRetryMs, d.storeRetryMs, 'storeRetryMs', 1, MAX_TIMER_DELAY_MS),
    pushSyncMs: pick(input.pushSyncMs, d.pushSyncMs, 'pushSyncMs', 1, MAX_TIMER_DELAY_MS),
    pauseSyncMs: pick(input.pauseSyncMs, d.pauseSyncMs, 'pauseSyncMs', 1, MAX_TIMER_DELAY_MS),
    pushMaxInFlight: pick(input.pushMaxInFlight, d.pushMaxInFlight, 'pushMaxInFlight', 1, MAX_PUSH_IN_FLIGHT),
    pushBreaker: {
      failureThreshold: pick(breaker.failureThreshold, d.pushBreaker.failureThreshold, 'pushBreaker.failureThreshold', 1, 1_000_000),
      cooldownMs: pick(breaker.cooldownMs, d.pushBreaker.cooldownMs, 'pushBreaker.cooldownMs', 1, MAX_TIMER_DELAY_MS),
      probeWaitMs: pick(breaker.probeWaitMs, d.pushBreaker.probeWaitMs, 'pushBreaker.probeWaitMs', 1, MAX_TIMER_DELAY_MS),
    },
    scheduleLeadMs: pick(input.scheduleLeadMs, d.scheduleLeadMs, 'scheduleLeadMs', 0, 3_600_000),
    scheduleGraceMs: pick(input.scheduleGraceMs, d.scheduleGraceMs, 'scheduleGraceMs', 0, MAX_TIMER_DELAY_MS),
    scheduleSyncMs: pick(input.scheduleSyncMs, d.scheduleSyncMs, 'scheduleSyncMs', 1, MAX_TIMER_DELAY_MS),
    loader: {
      pageSize: pick(loader.pageSize, d.loader.pageSize, 'loader.pageSize', 1, 1_000_000),
      maxReadyBacklog: pick(loader.maxReadyBacklog, d.loader.maxReadyBacklog, 'loader.maxReadyBacklog', 0, Number.MAX_SAFE_INTEGER),
      retryMs: pick(loader.retryMs, d.loader.retryMs, 'loader.retryMs', 1, MAX_TIMER_DELAY_MS),
    },
  };
}

/** The limits in force: the defaults with the caller's, each a whole number >= 1. */
export function resolveLimits(input: Partial<Limits> = {}): Limits {
  const limit = (key: keyof Limits): number =>
    input[key] === undefined ? DEFAULT_LIMITS[key] : validateIntOption(input[key], `limits.${key}`, 1, Number.MAX_SAFE_INTEGER);
  return {
    maxPayloadBytes: limit('maxPayloadBytes'),
    maxDelayMs: limit('maxDelayMs'),
    maxTopicLength: limit('maxTopicLength'),
    maxIdLength: limit('maxIdLength'),
    maxBatch: limit('maxBatch'),
    maxTtrMs: limit('maxTtrMs'),
    maxAttempts: limit('maxAttempts'),
    maxPayloadDepth:
      input.maxPayloadDepth === undefined ? DEFAULT_LIMITS.maxPayloadDepth : validateIntOption(input.maxPayloadDepth, 'limits.maxPayloadDepth', 1, MAX_PAYLOAD_DEPTH),
  };
}

/** Defaults for tasks that do not say, checked against the limits as a task's own would be. */
export function resolveTaskDefaults(input: Partial<TaskDefaults> = {}, limits: Limits = DEFAULT_LIMITS): TaskDefaults {
  const d = DEFAULT_TASK_DEFAULTS;
  return {
    ttrMs: input.ttrMs === undefined ? d.ttrMs : validateIntOption(input.ttrMs, 'defaults.ttrMs', 1, limits.maxTtrMs),
    maxAttempts: input.maxAttempts === undefined ? d.maxAttempts : validateIntOption(input.maxAttempts, 'defaults.maxAttempts', 1, limits.maxAttempts),
    backoff: validateBackoff(input.backoff, d.backoff),
  };
}
