/**
 * The LoopRunner owns the engine's loops (asynq's server.go to their forwarder.go,
 * recoverer.go, janitor.go): it builds each one complete over the store's ports, starts
 * them in this order and stops them in reverse.
 *
 *   Expirer        a reservation's TTR timer fired: the store expires it (retried on failure)
 *   Renewer        the reservations of handlers still running, extended in one store call a
 *                  round (stopped by the queue, after its workers: they run on while it closes)
 *   TopicPauses    the paused topics, read again from the store every pauseSyncMs; the
 *                  dispatcher reserves nothing of them
 *   Dispatcher     due tasks reach consumers: LocalDispatcher (in-process ReadyQueue) or, for
 *                  a store several processes share, SharedDispatcher (through the Promoter)
 *   TimerDriver    the timing wheel and its one timer: hands due timers to the two above
 *   Loader         keeps the wheel filled with the store's timers due within the horizon
 *   Janitor        purges finished tasks past their retention
 *   Pusher         (when push is configured) POSTs the due tasks of topics with a push
 *                  subscription to their URLs, and holds pull consumers of those topics back
 *   RecurringScheduleLoop  creates the occurrences of recurring schedules ahead of their
 *                  time, as ordinary tasks with derived ids (docs/cron.md)
 *
 * Each is built over the same LoopContext (loop-context.ts) and its own named parameters.
 *
 * Between them it places every timer the engine learns of (a task scheduled, moved or
 * retried, a reservation made, a timer loaded): into the wheel when it falls within the
 * loaded window, to the dispatcher or the expirer when it is due already, nowhere when it
 * lies beyond the window (the loader reads it when its time comes near). Tasks are created
 * through it too (`createTasks`: the facade's schedule and the recurring occurrences), so a
 * new task's timer has one way in, and a moved one another (`move`).
 *
 * Its lifecycle is explicit (asynq's server state): built -> running -> stopping -> stopped
 * -> sealed. `start` runs once, from built; `stop` from any phase resolves once the loops
 * have stopped (the same promise when called again; before a start it stops the loops that
 * never ran, which releases what they hold, such as the push transport); a stopped
 * LoopRunner never starts again. Timers are still placed while stopping and stopped, since
 * handlers running at close still settle, until `seal()` (the store is about to close).
 */
import { onPartial } from '../core/partial-batch.js';
import type { RemoteTimerSource, ScheduleOutcome } from '../core/ports/index.js';
import type { PushPorts } from '../core/push.js';
import { isPushLane, type Delivery, type NewTaskRecord, type ReservedTask, type TimerRef } from '../core/task/model.js';
import { decodeDelivery } from '../core/task/undecodable.js';
import type { Dispatcher } from './dispatch/dispatcher.js';
import { compileCron } from './recurring/cron-pattern.js';
import { Expirer } from './tasks/expirer.js';
import { Janitor } from './tasks/janitor.js';
import { LatenessRecorder } from './lateness.js';
import { Loader } from './timers/loader.js';
import { LocalDispatcher } from './dispatch/local-dispatcher.js';
import { NoticeTimers } from './timers/notice-timers.js';
import { Quarantine } from './tasks/quarantine.js';
import type { LoopContext } from './loop-context.js';
import { DeliveryGate } from './topics/delivery-gate.js';
import { Pusher } from './push/pusher.js';
import { Renewer, type Held } from './workers/renewer.js';
import { RecurringScheduleLoop } from './recurring/recurring-loop.js';
import { SharedDispatcher } from './dispatch/shared-dispatcher.js';
import { TimerDriver } from './timers/timer-driver.js';
import { FlowControl } from './topics/flow-control.js';
import { TopicPauses } from './topics/topic-pauses.js';
import type { QueueStats } from './queue-types.js';
import { QueueWorkSource, type WorkerHooks } from './workers/work-source.js';

/** What push delivery needs from the queue: its ports, and the queue's nack (validated like a consumer's). */
export interface PushSetup {
  readonly ports: PushPorts;
  readonly nack: (delivery: Delivery, error: string, delayMs?: number, outcome?: string) => Promise<unknown>;
  /** Signs the pushes of tasks with their own url on a topic without a subscription; null: none. */
  readonly defaultSecret: string | null;
}

/** Where the LoopRunner is in its life (see the header). */
export type RunnerPhase = 'built' | 'running' | 'stopping' | 'stopped' | 'sealed';

export class LoopRunner implements WorkerHooks {
  private readonly expirer: Expirer;
  /**
   * Renews the reservations of handlers still running (renewer.ts): started with the loops,
   * stopped by the queue once its workers have closed (they may run on while it closes).
   */
  readonly renewer: Renewer;
  /** The paused topics (DelayQueue.topics reaches them through it). */
  readonly pauses: TopicPauses;
  /** The topics' flow limits (DelayQueue.topics reaches them through it). */
  readonly flow: FlowControl;
  /** The check of a topic's pause and limits at hand-out (delivery-gate.ts). */
  readonly gate: DeliveryGate;
  private readonly dispatcher: Dispatcher;
  private readonly driver: TimerDriver;
  private readonly loader: Loader;
  private readonly janitor: Janitor;
  private readonly pusher: Pusher | null;
  private readonly notices: NoticeTimers;
  /** Rows that cannot be read, taken out of delivery (quarantine.ts); the inspection's reads use it too. */
  readonly quarantine: Quarantine;
  /** The push transport was warmed for a loaded task with its own url (warmTaskUrls). */
  private taskUrlsWarmed = false;
  /** Recurring schedules: DelayQueue.schedules reaches it through `recurring`. */
  readonly recurring: RecurringScheduleLoop;
  private readonly lateness = new LatenessRecorder();
  /** The own push url of each task the Pusher reserved from a push lane, by its delivery. */
  private readonly pushTargets = new WeakMap<Delivery, string>();
  private current: RunnerPhase = 'built';
  private stopping: Promise<void> | null = null;
  /** Reserve long-polls waiting now (calls of DelayQueue.reserve with waitMs > 0 not yet answered). */
  private waiting = 0;
  readonly observer: LoopContext['observer'];

  constructor(
    private readonly context: LoopContext,
    { push }: { push: PushSetup | null },
  ) {
    const { store, tuning } = context;
    this.observer = context.observer;
    this.expirer = new Expirer(context, { place: this.place });
    this.renewer = new Renewer(context, {
      extended: (id, receipt, until, topic) => {
        this.extended(id, receipt, until);
        this.flow.renewed(topic, receipt, until);
      },
    });
    this.pauses = new TopicPauses(context);
    this.flow = new FlowControl(context);
    const { pauses, flow } = this;
    this.gate = new DeliveryGate(context, pauses, flow);
    const gate = this.gate;
    const giveBack = (records: readonly ReservedTask[]): Promise<void> => this.giveBack(records);
    this.dispatcher =
      store.shared !== null
        ? new SharedDispatcher(context, { shared: store.shared, placeRemote: this.placeRemote, pauses, flow, gate, giveBack })
        : new LocalDispatcher(context, { pauses, flow, gate, giveBack });
    this.driver = new TimerDriver(context, { onDue: this.onDue, tickMs: tuning.tickMs, homes: store.timerHomes ?? undefined });
    this.loader = new Loader(context, { place: this.placeLoaded, backlog: this.dispatcher });
    this.janitor = new Janitor(context);
    this.recurring = new RecurringScheduleLoop(context, {
      compile: compileCron,
      create: async (tasks) => void (await this.createTasks(tasks)),
      planning: store.shared?.schedulePlanning ?? null,
    });
    // The pusher's workers reserve past the pull gate: the pushed topics' tasks are theirs.
    const pushHooks: WorkerHooks = {
      reserve: this.reserveForPush,
      remove: (id) => this.remove(id),
      watch: (d) => this.watch(d),
      hold: (held) => this.renewer.hold(held),
      drop: (held) => this.renewer.drop(held),
      settled: (topic, receipt) => this.settled(topic, receipt),
      observer: this.observer,
    };
    this.pusher =
      push === null
        ? null
        : new Pusher(context, {
            ports: push.ports,
            source: new QueueWorkSource(context, { runner: pushHooks, nack: push.nack, defer: (d, runAt) => this.defer(d, runAt) }),
            defaultSecret: push.defaultSecret,
            targetOf: (delivery) => this.pushTargets.get(delivery),
          });
    this.quarantine = new Quarantine(context, (ref) => this.move(ref));
    this.notices = new NoticeTimers(context, {
      driver: this.driver,
      window: () => this.loader.loadTarget,
      open: () => this.current !== 'sealed',
      due: (ref) => this.onDue([ref]),
      knowsLane: (lane) => this.pusher?.hasLane(lane) ?? true,
    });
  }

  get phase(): RunnerPhase {
    return this.current;
  }

  /** What the engine holds, for DelayQueue.stats(): the wheel, the ready backlog, long-polls, lateness, push. */
  stats(): Omit<QueueStats, 'store' | 'counts' | 'topics' | 'unavailable'> {
    const push = this.pusher?.stats() ?? null;
    return {
      timers: this.driver.size,
      ready: this.dispatcher.backlogByTopic(),
      oldestReady: this.dispatcher.oldestReadyByTopic(),
      waiting: this.waiting,
      paused: this.pauses.list(),
      limits: this.flow.list(),
      throttled: this.flow.throttled(),
      lateness: this.lateness.summary(),
      ...(push !== null ? { push } : {}),
    };
  }

  /** Starts the loops in order: built -> running. Throws in any other phase (a LoopRunner runs once). */
  start(): void {
    if (this.current !== 'built') throw new Error(`LoopRunner.start: the loop runner is ${this.current}; it starts once, from built`);
    this.current = 'running';
    this.expirer.start();
    this.renewer.start();
    this.pauses.start();
    this.flow.start();
    this.dispatcher.start();
    this.driver.start();
    this.loader.start();
    this.janitor.start();
    this.pusher?.start();
    this.recurring.start();
  }

  /**
   * Stops every loop, in reverse: consumers' reserves answer [], no expiry or promotion is
   * started, no load is read. Timers may still be placed (running handlers settle while the
   * queue closes) until `seal()`. Called again, it answers the same promise.
   */
  stop(): Promise<void> {
    if (this.stopping === null) {
      if (this.current === 'built' || this.current === 'running') this.current = 'stopping';
      this.stopping = this.stopLoops().finally(() => {
        if (this.current === 'stopping') this.current = 'stopped';
      });
    }
    return this.stopping;
  }

  private async stopLoops(): Promise<void> {
    // In-flight pushes finish and settle (the dispatcher only stops new reserves), then the transport closes.
    const pusherStopped = this.pusher?.stop();
    const recurringStopped = this.recurring.stop();
    this.janitor.stop();
    const loaderStopped = this.loader.stop();
    this.driver.stop();
    this.dispatcher.stop();
    this.pauses.stop();
    this.flow.stop();
    this.expirer.stop();
    await loaderStopped;
    await pusherStopped;
    await recurringStopped;
  }

  /** No timer is placed from now on: the store is closing. Only once stopped. */
  seal(): void {
    if (this.current !== 'stopped' && this.current !== 'sealed') throw new Error(`LoopRunner.seal: the loop runner is ${this.current}; it seals once stopped`);
    this.current = 'sealed';
  }

  /**
   * Creates tasks (an id that exists is left as it is: a retried call, an occurrence another
   * process made first), counts those created, and places their timers: the one way a new
   * task's timer comes in.
   */
  async createTasks(tasks: readonly NewTaskRecord[]): Promise<ScheduleOutcome[]> {
    const { store, clock, inFlight } = this.context;
    const settle = (outcomes: readonly (ScheduleOutcome | undefined)[]): void => {
      for (let i = 0; i < outcomes.length; i++) {
        const outcome = outcomes[i];
        if (outcome === undefined) continue;
        if (outcome.created) this.observer.scheduled(tasks[i]!.topic, 1);
        if (outcome.ref === null) continue;
        // A ref not created now is a task already pending: its timer may be in the wheel already.
        if (outcome.created) this.place(outcome.ref, true);
        else this.placeLoaded(outcome.ref);
      }
    };
    // A partition that could not be written fails only its tasks: the others are stored and
    // get their timers all the same.
    const outcomes = await inFlight.track(store.schedule(tasks, clock.now())).catch((error: unknown) => onPartial(error, settle));
    settle(outcomes);
    return outcomes;
  }

  /** A delivery of `topic` (its receipt) was settled (acked, nacked, deferred): its flow slot is freed. */
  settled(topic: string, receipt: string): void {
    this.flow.settled(topic, receipt);
  }

  /** The task's timer moved (rescheduled, retried, deferred): the old one goes, the new one is placed. */
  move(ref: TimerRef): void {
    this.driver.remove(ref.id);
    this.place(ref);
  }

  /**
   * Gives a delivery's reservation back uncounted, due again at `runAt` (the Pusher's
   * circuit breaker, a worker closed before its handler ended). A reservation that moved on
   * meanwhile is left alone.
   */
  async defer(delivery: Pick<Delivery, 'id' | 'topic' | 'receipt'>, runAt: number): Promise<void> {
    const { store, clock, inFlight, logger } = this.context;
    const outcome = await inFlight.track(store.defer(delivery.id, delivery.receipt, runAt, clock.now()));
    if (outcome.status === 'deferred') {
      this.settled(delivery.topic, delivery.receipt);
      this.move(outcome.ref);
    }
    else logger.warn({ id: delivery.id, outcome: outcome.status }, 'giving a reservation back after it ran out');
  }

  /**
   * Reservations a pause or a change of limits caught between their reserve and their
   * hand-out (delivery-gate.ts): given back uncounted, due again at their runAt, so they keep
   * their place and go out under the rules now in force.
   */
  private async giveBack(records: readonly ReservedTask[]): Promise<void> {
    await Promise.all(records.flatMap((record) => (record.receipt === null ? [] : [this.defer({ id: record.id, topic: record.topic, receipt: record.receipt }, record.runAt)])));
  }

  /** Applies the store's push subscriptions now (after a change through this queue). */
  syncPush(): Promise<void> {
    return this.pusher?.sync() ?? Promise.resolve();
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

  /**
   * A pull consumer's reserve (DelayQueue.reserve): waits up to `waitMs` for a due task, or
   * until one of `signals` aborts, counted in `waiting` meanwhile.
   */
  async longPoll(topic: string, max: number, waitMs: number, ttrMs: number | undefined, signals: readonly AbortSignal[]): Promise<Delivery[]> {
    const { clock } = this.context;
    const deadline = new AbortController();
    const timer = waitMs > 0 ? clock.setTimer(() => deadline.abort(), waitMs) : null;
    if (timer === null) deadline.abort();
    const signal = AbortSignal.any([deadline.signal, ...signals]);
    if (timer === null) return this.reserve(topic, max, signal, ttrMs, true);
    this.waiting++;
    try {
      return await this.reserve(topic, max, signal, ttrMs, true);
    } finally {
      this.waiting--;
      clock.clearTimer(timer);
    }
  }

  private readonly reserveForPush = (topic: string, max: number, signal: AbortSignal, ttrMs: number | undefined, watch: boolean): Promise<Delivery[]> =>
    this.dispatcher.reserve(topic, max, signal, ttrMs, isPushLane(topic) ? (watch ? this.deliverTargetWatched : this.deliverTarget) : watch ? this.deliverWatched : this.deliver);

  /** Forgets the task's timer, whichever kind (it was cancelled, moved or settled). */
  remove(id: string): void {
    this.driver.remove(id);
  }

  /**
   * Forgets the run timers of purged pending tasks (TopicPurgeStep.runs): in the wheel, and
   * those due waiting for a consumer (by `final`, the purge's end, at the latest).
   */
  forgetRuns(refs: readonly TimerRef[], final: boolean): void {
    for (const ref of refs) this.driver.removeRun(ref);
    this.dispatcher.forget(refs, final);
  }

  /**
   * A reservation was extended to `reservedUntil`: the ttr timer this process holds for it
   * (the same receipt) moves there. A timer held elsewhere (the owner of the task's shard)
   * learns it when it fires: the store answers `held` (expirer.ts).
   */
  extended(id: string, receipt: string, reservedUntil: number): void {
    const held = this.driver.ttrTimerOf(id);
    if (held !== undefined && held.receipt === receipt) this.place({ ...held, dueAt: reservedUntil });
  }

  hold(held: Held): void {
    this.renewer.hold(held);
  }

  drop(held: Held): void {
    this.renewer.drop(held);
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
    if (this.current === 'sealed' || ref.dueAt >= this.loader.loadTarget) return;
    const held = created ? this.driver.addNew(ref) : this.driver.add(ref);
    if (!held) this.onDue([ref]);
  };

  /**
   * A timer a shared store hands over: read from the store (a partition taken over, a
   * reservation that ran out elsewhere), placed like a loaded one; or told by another
   * process's message, which may only make the engine look again (notice-timers.ts).
   * Neither may throw here, in the store's listener: a time that is not a whole number is dropped.
   */
  private readonly placeRemote = (ref: TimerRef, source: RemoteTimerSource): void => {
    if (source === 'notice') this.notices.place(ref);
    else if (Number.isSafeInteger(ref.dueAt)) this.placeLoaded(ref);
  };

  /** A timer read by the loader or handed over by a shared store: it may be in the wheel already. */
  readonly placeLoaded = (ref: TimerRef): void => {
    if (isPushLane(ref.topic)) this.warmTaskUrls(ref.id);
    if (!this.driver.holds(ref)) this.place(ref);
  };

  /**
   * The first task with its own push url that a start finds in the store (no subscription
   * names its url, so nothing warmed the push transport): its url is read once, and the
   * transport loaded and its host resolved before it is due, so that push is as punctual as
   * the rest. One read per process: later urls find the transport loaded.
   */
  private warmTaskUrls(id: string): void {
    if (this.pusher === null || this.taskUrlsWarmed) return;
    this.taskUrlsWarmed = true;
    const { store, inFlight } = this.context;
    void inFlight
      .track(store.get(id))
      .then((record) => typeof record?.url === 'string' && this.pusher?.warm(record.url))
      .catch(() => undefined);
  }

  private readonly deliver = (record: ReservedTask, now: number): Delivery | null => {
    const decoded = decodeDelivery(record);
    if (decoded.problem !== null) {
      // Quarantined, not delivered: its flow slot is free at once (its topic, if it has one).
      this.quarantine.reserved(record, decoded.problem);
      if (typeof record.topic === 'string') this.settled(record.topic, record.id);
      return null;
    }
    this.lateness.record(now - record.runAt);
    this.observer.delivered(record.topic, now - record.runAt);
    return decoded.value;
  };

  private readonly deliverWatched = (record: ReservedTask, now: number): Delivery | null => {
    const delivery = this.deliver(record, now);
    if (delivery !== null) this.watch(delivery);
    return delivery;
  };

  /** A delivery of a push lane, its task's url noted for the Pusher (a Delivery has no url field). */
  private readonly deliverTarget = (record: ReservedTask, now: number): Delivery | null => {
    const delivery = this.deliver(record, now);
    if (delivery !== null && record.url) this.pushTargets.set(delivery, record.url);
    return delivery;
  };

  private readonly deliverTargetWatched = (record: ReservedTask, now: number): Delivery | null => {
    const delivery = this.deliverTarget(record, now);
    if (delivery !== null) this.watch(delivery);
    return delivery;
  };

  private readonly onDue = (due: TimerRef[]): void => {
    this.dispatcher.dispatch(due);
    for (const ref of due) {
      if (ref.kind === 'ttr') this.expirer.expire(ref);
      // Whichever process's wheel a push lane's task falls due in consumes that lane (pusher.ts).
      else if (this.pusher !== null && isPushLane(ref.topic)) this.pusher.laneDue(ref.topic);
    }
  };
}
