/**
 * The engine's tuning options: what they mean, their defaults and their bounds, checked
 * like every other input (validate.ts's message format, INVALID_OPTION) before any part
 * of the engine starts. Only numbers live here; the engine's options type adds its ports
 * (clock, logger, randomness) and the task limits and defaults.
 */
import { DelayQError } from './errors.js';
import { ENGINE_OPTIONS, numberDefault, type OptionSpec } from './option-table/index.js';
import { BREAKER_DEFAULTS, type BreakerOptions } from './push-breaker.js';
import { DEFAULT_LIMITS, DEFAULT_TASK_DEFAULTS, validateBackoff, validateIntOption, type Limits, type TaskDefaults } from './task/validate.js';

/** The longest delay a Clock timer takes (Node's setTimeout fires at once beyond it). */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** The most push slots a process may have (`pushMaxInFlight`). */
export const MAX_PUSH_IN_FLIGHT: number = ENGINE_OPTIONS['push.maxInFlight'].max;

export interface LoaderOptions {
  /** Timers per loadDue call. Default 2,000. */
  readonly pageSize: number;
  /** Pause loading while more tasks than this wait for a consumer (no thundering herd). Default 10,000. */
  readonly maxReadyBacklog: number;
  /** Wait before retrying a failed load. Default 1 s. */
  readonly retryMs: number;
}

export const DEFAULT_LOADER_OPTIONS: LoaderOptions = {
  pageSize: numberDefault(ENGINE_OPTIONS['loader.pageSize']),
  maxReadyBacklog: numberDefault(ENGINE_OPTIONS['loader.maxReadyBacklog']),
  retryMs: numberDefault(ENGINE_OPTIONS['loader.retryMs']),
};

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

const E = ENGINE_OPTIONS;

/** The defaults, from the options table (core/option-table/engine.ts). */
export const DEFAULT_ENGINE_TUNING: EngineTuning = {
  tickMs: numberDefault(E.tickMs),
  retentionMs: numberDefault(E.retentionMs),
  purgeIntervalMs: numberDefault(E.purgeIntervalMs),
  purgeBatch: numberDefault(E.purgeBatch),
  storeRetryMs: numberDefault(E.storeRetryMs),
  pushSyncMs: numberDefault(E.pushSyncMs),
  pauseSyncMs: numberDefault(E.pauseSyncMs),
  pushBreaker: BREAKER_DEFAULTS,
  pushMaxInFlight: numberDefault(E['push.maxInFlight']),
  scheduleLeadMs: numberDefault(E.scheduleLeadMs),
  scheduleGraceMs: numberDefault(E.scheduleGraceMs),
  scheduleSyncMs: numberDefault(E.scheduleSyncMs),
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
  // Each number by its row of the table: the default when not given, else checked against its bounds.
  const pick = (value: number | undefined, spec: OptionSpec, field = spec.library ?? ''): number =>
    value === undefined ? numberDefault(spec) : validateIntOption(value, field, spec.min ?? 0, spec.max ?? Number.MAX_SAFE_INTEGER);
  return {
    tickMs: pick(input.tickMs, E.tickMs),
    retentionMs: pick(input.retentionMs, E.retentionMs),
    purgeIntervalMs: pick(input.purgeIntervalMs, E.purgeIntervalMs),
    purgeBatch: pick(input.purgeBatch, E.purgeBatch),
    storeRetryMs: pick(input.storeRetryMs, E.storeRetryMs),
    pushSyncMs: pick(input.pushSyncMs, E.pushSyncMs),
    pauseSyncMs: pick(input.pauseSyncMs, E.pauseSyncMs),
    // The engine's name for push.maxInFlight, which DelayQueue.open checks under the caller's name.
    pushMaxInFlight: pick(input.pushMaxInFlight, E['push.maxInFlight'], 'pushMaxInFlight'),
    pushBreaker: {
      failureThreshold: pick(breaker.failureThreshold, E['pushBreaker.failureThreshold']),
      cooldownMs: pick(breaker.cooldownMs, E['pushBreaker.cooldownMs']),
      probeWaitMs: pick(breaker.probeWaitMs, E['pushBreaker.probeWaitMs']),
    },
    scheduleLeadMs: pick(input.scheduleLeadMs, E.scheduleLeadMs),
    scheduleGraceMs: pick(input.scheduleGraceMs, E.scheduleGraceMs),
    scheduleSyncMs: pick(input.scheduleSyncMs, E.scheduleSyncMs),
    loader: {
      pageSize: pick(loader.pageSize, E['loader.pageSize']),
      maxReadyBacklog: pick(loader.maxReadyBacklog, E['loader.maxReadyBacklog']),
      retryMs: pick(loader.retryMs, E['loader.retryMs']),
    },
  };
}

/** The limits in force: the defaults with the caller's, each a whole number >= 1. */
export function resolveLimits(input: Partial<Limits> = {}): Limits {
  const limit = (key: keyof Limits): number => {
    const spec: OptionSpec = E[`limits.${key}`];
    return input[key] === undefined ? DEFAULT_LIMITS[key] : validateIntOption(input[key], `limits.${key}`, spec.min ?? 1, spec.max ?? Number.MAX_SAFE_INTEGER);
  };
  const limits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]) limits[key] = limit(key);
  return limits;
}

/** Defaults for tasks that do not say, checked against the limits as a task's own would be. */
export function resolveTaskDefaults(input: Partial<TaskDefaults> = {}, limits: Limits = DEFAULT_LIMITS): TaskDefaults {
  const d = DEFAULT_TASK_DEFAULTS;
  return {
    // Their upper bounds are the limits in force (the table's maxNote).
    ttrMs: input.ttrMs === undefined ? d.ttrMs : validateIntOption(input.ttrMs, 'defaults.ttrMs', E['defaults.ttrMs'].min, limits.maxTtrMs),
    maxAttempts: input.maxAttempts === undefined ? d.maxAttempts : validateIntOption(input.maxAttempts, 'defaults.maxAttempts', E['defaults.maxAttempts'].min, limits.maxAttempts),
    backoff: validateBackoff(input.backoff, d.backoff),
  };
}
