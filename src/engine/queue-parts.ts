/**
 * The parts behind the EngineQueue facade, built complete over one store from its options
 * (each checked here: INVALID_OPTION, INVALID_SECRET) before anything runs. The one place
 * that knows how they depend on each other: the facade only calls them.
 */
import { silentLogger } from '../core/logger.js';
import { NO_OBSERVER } from '../core/observer.js';
import { resolveEngineTuning, resolveLimits, resolveTaskDefaults } from '../core/options.js';
import type { TaskStore } from '../core/ports/index.js';
import type { Limits } from '../core/task/validate.js';
import { DelayQError } from '../core/errors.js';
import { TaskEvents } from './events/task-events.js';
import { InFlight } from './in-flight.js';
import { Inspection } from './tasks/inspection.js';
import type { LoopContext } from './loop-context.js';
import { checkDefaultSecret, PushRules } from './push/push-rules.js';
import type { EngineOptions } from './queue-types.js';
import { LoopRunner } from './loop-runner.js';
import { RecurringSchedules } from './recurring/recurring-schedules.js';
import type { Settlements } from './tasks/settlements.js';
import { systemClock } from './timers/wall-clock.js';
import { TaskChanges } from './tasks/changes.js';
import { Topics } from './topics/topics.js';
import { QueueWorkSource } from './workers/work-source.js';

export interface QueueParts {
  readonly limits: Limits;
  readonly context: LoopContext;
  /** The loops, their lifecycle, and every timer. */
  readonly runner: LoopRunner;
  /** schedule, cancel, reschedule, retryDead, cancelDead. */
  readonly changes: TaskChanges;
  /** ack, ackMany, nack. */
  readonly settlements: Settlements;
  /** get, list, stats, dueHistogram. */
  readonly inspection: Inspection;
  /** The queue as `work` handlers see it. */
  readonly workSource: QueueWorkSource;
  /** Push subscriptions and the checks of tasks' own push urls. */
  readonly push: PushRules;
  readonly schedules: RecurringSchedules;
  /** Operations on a whole topic: purge. */
  readonly topics: Topics;
  /** Lifecycle events: their log, publisher and subscribers. */
  readonly events: TaskEvents;
}

/** What recurring schedules need of the facade itself: its open check and its cancelMany. */
export interface FacadeHooks {
  readonly assertOpen: () => void;
  readonly cancelMany: (ids: readonly string[]) => Promise<boolean[]>;
}

export function buildQueueParts(store: TaskStore, options: EngineOptions, facade: FacadeHooks): QueueParts {
  const tuning = resolveEngineTuning(options);
  const limits = resolveLimits(options.limits);
  const defaults = resolveTaskDefaults(options.defaults, limits);
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const observer = options.observer ?? NO_OBSERVER;
  const inFlight = new InFlight();
  if (options.events !== undefined && typeof options.events !== 'boolean') throw new DelayQError('INVALID_OPTION', 'events: must be a boolean', { field: 'events' });
  const events = new TaskEvents({
    enabled: options.events === true,
    store,
    clock,
    logger,
    inFlight,
    dropped: (reason, count) => observer.eventsDropped?.(reason, count),
  });
  const context: LoopContext = { store, clock, logger, observer, tuning, inFlight, events };
  const ports = options.push ?? null;
  const defaultSecret = checkDefaultSecret(options.pushSecret);
  // Built in the order of what each needs: the runner builds the timer routes and the
  // settlements (its Pusher nacks failed pushes through them); the rest call into it.
  const runner = new LoopRunner(context, { push: ports === null ? null : { ports, defaultSecret }, limits, random: options.random ?? Math.random });
  const { timers, settlements } = runner;
  const push = new PushRules(context, { ports, defaultSecret, applied: () => runner.syncPush(), limits });
  return {
    limits,
    context,
    events,
    runner,
    changes: new TaskChanges(context, { timers, push, limits, defaults }),
    settlements,
    inspection: new Inspection(context, { runner, limits }),
    workSource: new QueueWorkSource(context, { runner, nack: settlements.nackDelivery, defer: (d, runAt) => runner.defer(d, runAt), settlements }),
    push,
    topics: new Topics(context, { runner, limits, assertOpen: facade.assertOpen }),
    schedules: new RecurringSchedules(context, {
      loop: runner.recurring,
      limits,
      defaults,
      assertOpen: facade.assertOpen,
      cancel: facade.cancelMany,
      checkPushTarget: (topic, url) => push.checkTargets([{ topic, url }]),
    }),
  };
}
