/**
 * The Scheduler owns the engine's loops (asynq's server.go to their forwarder.go,
 * recoverer.go, janitor.go): it builds each one complete over the store's ports, starts
 * them in this order and stops them in reverse.
 *
 *   Expirer      a reservation's TTR timer fired: the store expires it (retried on failure)
 *   Dispatcher   due tasks reach consumers: LocalDispatcher (in-process ReadyQueue) or, for a
 *                store several processes share, SharedDispatcher (through the Promoter)
 *   TimerDriver  the timing wheel and its one timer: hands due timers to the two above
 *   Loader       keeps the wheel filled with the store's timers due within the horizon
 *   Janitor      purges finished tasks past their retention
 *   Pusher       (when push is configured) POSTs the due tasks of topics with a push
 *                subscription to their URLs, and holds pull consumers of those topics back
 *   ScheduleLoop creates the occurrences of recurring schedules ahead of their time, as
 *                ordinary tasks with derived ids (docs/cron.md)
 *
 * Between them it places every timer the engine learns of (a task scheduled, moved or
 * retried, a reservation made, a timer loaded): into the wheel when it falls within the
 * loaded window, to the dispatcher or the expirer when it is due already, nowhere when it
 * lies beyond the window (the loader reads it when its time comes near).
 */
import type { EngineTuning } from '../core/options.js';
import type { Clock, Logger, TaskStore } from '../core/ports/index.js';
import { UNKNOWN_TOPIC, type QueueObserver } from '../core/observer.js';
import type { PushPorts } from '../core/push.js';
import { PUSH_LANE, toDelivery, type Delivery, type NewTaskRecord, type ReservedTask, type TimerRef } from '../core/task/model.js';
import type { Dispatcher } from './dispatcher.js';
import { compileCron } from './cron-pattern.js';
import { Expirer } from './expirer.js';
import type { InFlight } from './in-flight.js';
import { Janitor } from './janitor.js';
import { LatenessRecorder, type LatenessSummary } from './lateness.js';
import { Loader } from './loader.js';
import { LocalDispatcher } from './local-dispatcher.js';
import { Promoter } from './promoter.js';
import type { PushStats } from './push-stats.js';
import { Pusher } from './pusher.js';
import { ScheduleLoop } from './schedule-loop.js';
import { SharedDispatcher } from './shared-dispatcher.js';
import { TimerDriver } from './timer-driver.js';
import { QueueWorkSource, type WorkScheduler } from './work-source.js';

/** What push delivery needs from the queue: its ports, and the queue's nack (it places the retry's timer). */
export interface PushSetup {
  readonly ports: PushPorts;
  readonly nack: (delivery: Delivery, error: string, delayMs?: number) => Promise<unknown>;
  /** The queue's defer: the reservation given back uncounted (the circuit breaker's hold). */
  readonly defer: (delivery: Delivery, runAt: number) => Promise<unknown>;
  /** Signs the pushes of tasks with their own url on a topic without a subscription; null: none. */
  readonly defaultSecret: string | null;
}

export class Scheduler implements WorkScheduler {
  private readonly expirer: Expirer;
  private readonly dispatcher: Dispatcher;
  private readonly driver: TimerDriver;
  private readonly loader: Loader;
  private readonly janitor: Janitor;
  private readonly pusher: Pusher | null;
  /** Recurring schedules: DelayQueue.schedules reaches it through `schedules`. */
  readonly schedules: ScheduleLoop;
  private readonly lateness = new LatenessRecorder();
  /** The own push url of each task the Pusher reserved from PUSH_LANE, by its delivery. */
  private readonly pushTargets = new WeakMap<Delivery, string>();
  /** Set once the store is about to close: no timer is placed any more. */
  private closed = false;

  constructor(
    store: TaskStore,
    clock: Clock,
    logger: Logger,
    tuning: EngineTuning,
    inFlight: InFlight,
    push: PushSetup | undefined,
    readonly observer: QueueObserver,
  ) {
    this.expirer = new Expirer(store, clock, logger, inFlight, tuning.storeRetryMs, this.place, observer);
    const shared = store.shared;
    this.dispatcher =
      shared !== null
        ? new SharedDispatcher(shared, clock, inFlight, new Promoter(shared, clock, logger, inFlight, tuning.storeRetryMs), this.placeLoaded)
        : new LocalDispatcher(store, clock, inFlight);
    this.driver = new TimerDriver(clock, this.onDue, tuning.tickMs, store.timerHomes ?? undefined);
    this.loader = new Loader(store, clock, store.horizonMs, this.placeLoaded, this.dispatcher, logger, tuning.loader);
    this.janitor = new Janitor(store, clock, logger, inFlight, tuning);
    // The pusher's workers reserve past the pull gate: the pushed topics' tasks are theirs.
    const pushScheduler: WorkScheduler = { reserve: this.reserveForPush, remove: (id) => this.remove(id), watch: (d) => this.watch(d), observer };
    this.schedules = new ScheduleLoop(store, compileCron, (tasks) => this.createTasks(store, clock, inFlight, tasks), clock, logger, inFlight, {
      leadMs: tuning.scheduleLeadMs,
      graceMs: tuning.scheduleGraceMs,
      syncMs: tuning.scheduleSyncMs,
      retryMs: tuning.storeRetryMs,
      planning: shared?.schedulePlanning ?? null,
    });
    this.pusher =
      push === undefined
        ? null
        : new Pusher(store, push.ports, new QueueWorkSource(store, clock, logger, pushScheduler, push.nack, tuning.storeRetryMs, push.defer), clock, logger, inFlight, tuning.pushSyncMs, {
            defaultSecret: push.defaultSecret,
            targetOf: (delivery) => this.pushTargets.get(delivery),
            breaker: tuning.pushBreaker,
            maxInFlight: tuning.pushMaxInFlight,
          });
  }

  /** Reserve long-polls waiting now (calls of DelayQueue.reserve with waitMs > 0 not yet answered). */
  waiting = 0;

  /** Timers in the wheel. */
  get timers(): number {
    return this.driver.size;
  }

  start(): void {
    this.expirer.start();
    this.dispatcher.start();
    this.driver.start();
    this.loader.start();
    this.janitor.start();
    this.pusher?.start();
    this.schedules.start();
  }

  /**
   * Stops every loop: consumers' reserves answer [], no expiry or promotion is started, no
   * load is read. Timers may still be placed (running handlers settle while the queue
   * closes) until `seal()`.
   */
  async stop(): Promise<void> {
    // In-flight pushes finish and settle (the dispatcher only stops new reserves), then the transport closes.
    const pusherStopped = this.pusher?.stop();
    const schedulesStopped = this.schedules.stop();
    this.janitor.stop();
    const loaderStopped = this.loader.stop();
    this.driver.stop();
    this.dispatcher.stop();
    this.expirer.stop();
    await loaderStopped;
    await pusherStopped;
    await schedulesStopped;
  }

  /** Creates tasks whose ids may exist already (occurrences of schedules) and places the new timers. */
  private async createTasks(store: TaskStore, clock: Clock, inFlight: InFlight, tasks: readonly NewTaskRecord[]): Promise<void> {
    const outcomes = await inFlight.track(store.schedule(tasks, clock.now()));
    for (let i = 0; i < outcomes.length; i++) {
      const outcome = outcomes[i]!;
      // Counted by the process that created it: an occurrence another process made first is not.
      if (outcome.created) this.observer.scheduled(tasks[i]!.topic, 1);
      if (outcome.ref === null) continue;
      if (outcome.created) this.place(outcome.ref, true);
      else this.placeLoaded(outcome.ref);
    }
  }

  /** Applies the store's push subscriptions now (after a change through this queue). */
  syncPush(): Promise<void> {
    return this.pusher?.sync() ?? Promise.resolve();
  }

  /** No timer is placed from now on: the store is closing. */
  seal(): void {
    this.closed = true;
  }

  /**
   * Reserves up to `max` due tasks of `topic` (see Dispatcher.reserve) and delivers them,
   * recording how late each is. `watch`: arm each reservation's TTR timer now (workers arm
   * only those of handlers still running a turn later).
   */
  reserve(topic: string, max: number, signal: AbortSignal, ttrMs: number | undefined, watch: boolean): Promise<Delivery[]> {
    const deliver = watch ? this.deliverWatched : this.deliver;
    if (this.pusher === null) return this.dispatcher.reserve(topic, max, signal, ttrMs, deliver);
    // Pull consumers get nothing of a topic with a push subscription.
    return this.pusher.pull(topic, signal, (gated) => this.dispatcher.reserve(topic, max, gated, ttrMs, deliver));
  }

  private readonly reserveForPush = (topic: string, max: number, signal: AbortSignal, ttrMs: number | undefined, watch: boolean): Promise<Delivery[]> =>
    this.dispatcher.reserve(topic, max, signal, ttrMs, topic === PUSH_LANE ? (watch ? this.deliverTargetWatched : this.deliverTarget) : watch ? this.deliverWatched : this.deliver);

  /** How late deliveries were (delivered at - runAt). */
  latenessSummary(): LatenessSummary {
    return this.lateness.summary();
  }

  /** Push counters and circuits (null when the queue does not push). */
  pushStats(): PushStats | null {
    return this.pusher?.stats() ?? null;
  }

  backlogByTopic(): Readonly<Record<string, number>> {
    return this.dispatcher.backlogByTopic();
  }

  oldestReadyByTopic(): Readonly<Record<string, number>> {
    return this.dispatcher.oldestReadyByTopic();
  }

  /**
   * Forgets the task's timer, whichever kind (it was cancelled, moved or settled). Returns
   * the task's topic when its timer was in the wheel, else UNKNOWN_TOPIC (for the observer).
   */
  remove(id: string): string {
    return this.driver.remove(id)?.topic ?? UNKNOWN_TOPIC;
  }

  /** Arms the reservation's TTR timer: if it is neither acked nor nacked by then, it expires. */
  watch(delivery: Delivery): void {
    this.place({ id: delivery.id, topic: delivery.topic, kind: 'ttr', dueAt: delivery.reservedUntil, seq: 0, receipt: delivery.receipt });
  }

  /**
   * Puts a timer where it belongs (see the header), replacing the task's timer if any.
   * `created`: the task is new, so it has no timer to replace yet.
   */
  readonly place = (ref: TimerRef, created = false): void => {
    if (this.closed || ref.dueAt >= this.loader.loadTarget) return;
    const held = created ? this.driver.addNew(ref) : this.driver.add(ref);
    if (!held) this.onDue([ref]);
  };

  /** A timer read by the loader or handed over by a shared store: it may be in the wheel already. */
  readonly placeLoaded = (ref: TimerRef): void => {
    if (!this.driver.holds(ref)) this.place(ref);
  };

  private readonly deliver = (record: ReservedTask, now: number): Delivery => {
    this.lateness.record(now - record.runAt);
    this.observer.delivered(record.topic, now - record.runAt);
    return toDelivery(record);
  };

  private readonly deliverWatched = (record: ReservedTask, now: number): Delivery => {
    const delivery = this.deliver(record, now);
    this.watch(delivery);
    return delivery;
  };

  /** A delivery of PUSH_LANE, its task's url noted for the Pusher (a Delivery has no url field). */
  private readonly deliverTarget = (record: ReservedTask, now: number): Delivery => {
    const delivery = this.deliver(record, now);
    if (record.url) this.pushTargets.set(delivery, record.url);
    return delivery;
  };

  private readonly deliverTargetWatched = (record: ReservedTask, now: number): Delivery => {
    const delivery = this.deliverTarget(record, now);
    this.watch(delivery);
    return delivery;
  };

  private readonly onDue = (due: TimerRef[]): void => {
    this.dispatcher.dispatch(due);
    for (const ref of due) if (ref.kind === 'ttr') this.expirer.expire(ref);
  };
}
