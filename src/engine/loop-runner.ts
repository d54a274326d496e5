/**
 * The LoopRunner owns the engine's loops (asynq's server.go to their forwarder.go,
 * recoverer.go, janitor.go): it builds each one complete over the store's ports, starts
 * them in this order and stops them in reverse.
 *
 *   Expirer        a reservation's TTR timer fired: the store expires it (retried on failure)
 *   Renewer        the reservations of handlers still running, extended in one store call a
 *                  round (stopped by the queue, after its workers: they run on while it closes)
 *   TopicPauses    the paused topics, read again from the store every pauseSyncMs; the
 *   FlowControl    topics' flow limits likewise; the dispatcher reserves past neither
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
 * Each is built over the same LoopContext (loop-context.ts) and its own named parameters,
 * in the order of what it needs: the timer routes (timers/timer-routes.ts: where every timer
 * goes), the hand-out of reserved tasks (dispatch/hand-out.ts), then the Settlements the
 * Pusher nacks its failed pushes through, then the Pusher. Between the loops it routes the
 * timers that fall due (`onDue`) and the consumers' reserves (`reserve`, `longPoll`).
 *
 * Its lifecycle is explicit (asynq's server state): built -> running -> stopping -> stopped
 * -> sealed. `start` runs once, from built; `stop` from any phase resolves once the loops
 * have stopped (the same promise when called again; before a start it stops the loops that
 * never ran, which releases what they hold, such as the push transport); a stopped
 * LoopRunner never starts again. Timers are still placed while stopping and stopped, since
 * handlers running at close still settle, until `seal()` (the store is about to close).
 */
import type { PushPorts } from '../core/push.js';
import { isPushLane, type Delivery, type ReservedTask, type TimerRef } from '../core/task/model.js';
import type { Limits } from '../core/task/validate.js';
import type { Dispatcher } from './dispatch/dispatcher.js';
import { HandOut } from './dispatch/hand-out.js';
import { LocalDispatcher } from './dispatch/local-dispatcher.js';
import { SharedDispatcher } from './dispatch/shared-dispatcher.js';
import type { LoopContext } from './loop-context.js';
import { Pusher } from './push/pusher.js';
import type { QueueStats } from './queue-types.js';
import { compileCron } from './recurring/cron-pattern.js';
import { RecurringScheduleLoop } from './recurring/recurring-loop.js';
import { Expirer } from './tasks/expirer.js';
import { Janitor } from './tasks/janitor.js';
import { Quarantine } from './tasks/quarantine.js';
import { Settlements } from './tasks/settlements.js';
import { Loader } from './timers/loader.js';
import { NoticeTimers } from './timers/notice-timers.js';
import { TimerDriver } from './timers/timer-driver.js';
import { TimerRoutes } from './timers/timer-routes.js';
import { DeliveryGate } from './topics/delivery-gate.js';
import { FlowControl } from './topics/flow-control.js';
import { TopicPauses } from './topics/topic-pauses.js';
import { Renewer, type Held } from './workers/renewer.js';
import { QueueWorkSource, type WorkerHooks } from './workers/work-source.js';

/** What push delivery needs from the queue: its ports and its default secret. */
export interface PushSetup {
  readonly ports: PushPorts;
  /** Signs the pushes of tasks with their own url on a topic without a subscription; null: none. */
  readonly defaultSecret: string | null;
}

export interface LoopRunnerParams {
  /** Null when push is not configured. */
  readonly push: PushSetup | null;
  /** The queue's limits, for the calls of the settlements built here. */
  readonly limits: Limits;
  /** Randomness for backoff jitter. */
  readonly random: () => number;
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
  /** The paused topics (EngineQueue.topics reaches them through it). */
  readonly pauses: TopicPauses;
  /** The topics' flow limits (EngineQueue.topics reaches them through it). */
  readonly flow: FlowControl;
  /** The check of a topic's pause and flow limits at hand-out (delivery-gate.ts). */
  readonly gate: DeliveryGate;
  private readonly dispatcher: Dispatcher;
  private readonly driver: TimerDriver;
  private readonly loader: Loader;
  /** Where every timer goes; the facade's task changes and the settlements place theirs through it. */
  readonly timers: TimerRoutes;
  private readonly handOut: HandOut;
  private readonly janitor: Janitor;
  /** ack, ackMany, nack, extend: built here, before the Pusher, which nacks its failed pushes through them. */
  readonly settlements: Settlements;
  private readonly pusher: Pusher | null;
  /** Rows that cannot be read, taken out of delivery (quarantine.ts); the inspection's reads use it too. */
  readonly quarantine: Quarantine;
  /** The push transport was warmed for a loaded task with its own url (warmTaskUrls). */
  private taskUrlsWarmed = false;
  /** Recurring schedules: EngineQueue.schedules reaches it through `recurring`. */
  readonly recurring: RecurringScheduleLoop;
  private current: RunnerPhase = 'built';
  private stopping: Promise<void> | null = null;
  /** Reserve long-polls waiting now (calls of reserve with waitMs > 0 not yet answered). */
  private waiting = 0;
  readonly observer: LoopContext['observer'];

  constructor(
    private readonly context: LoopContext,
    { push, limits, random }: LoopRunnerParams,
  ) {
    const { store, tuning } = context;
    this.observer = context.observer;
    // The expirer, the renewer, the dispatcher and the loader reach the timer routes, built
    // below over the driver and the loader, only when a timer or a reservation comes: after this constructor.
    this.expirer = new Expirer(context, { place: (ref) => this.timers.place(ref) });
    this.renewer = new Renewer(context, {
      extended: (id, receipt, until, topic) => {
        this.timers.extended(id, receipt, until);
        this.flow.renewed(topic, receipt, until);
      },
    });
    this.pauses = new TopicPauses(context);
    this.flow = new FlowControl(context);
    const { pauses, flow } = this;
    const gate = (this.gate = new DeliveryGate(context, pauses, flow));
    const giveBack = (records: readonly ReservedTask[]): Promise<void> => this.giveBack(records);
    this.dispatcher =
      store.coordination !== null
        ? new SharedDispatcher(context, { shared: store.coordination, placeRemote: (ref, source) => this.timers.placeRemote(ref, source), pauses, flow, gate, giveBack })
        : new LocalDispatcher(context, { pauses, flow, gate, giveBack });
    const driver = (this.driver = new TimerDriver(context, { onDue: this.onDue, tickMs: tuning.tickMs, runTimers: store.tasks.runTimers }));
    const loader = (this.loader = new Loader(context, { place: (ref) => this.timers.placeLoaded(ref), backlog: this.dispatcher }));
    const window = (): number => loader.loadTarget;
    const open = (): boolean => this.current !== 'sealed';
    const notices = new NoticeTimers(context, { driver, window, open, due: (ref) => this.onDue([ref]), knowsLane: (lane) => this.pusher?.hasLane(lane) ?? true });
    this.timers = new TimerRoutes(context, { driver, window, open, due: this.onDue, notices, pushLaneLoaded: (id) => this.warmTaskUrls(id) });
    this.quarantine = new Quarantine(context, (ref) => this.timers.move(ref));
    this.handOut = new HandOut({ observer: this.observer, events: context.events, quarantine: this.quarantine, settled: (topic, receipt) => this.settled(topic, receipt), watch: (d) => this.timers.watch(d) });
    this.janitor = new Janitor(context);
    this.recurring = new RecurringScheduleLoop({ ...context, store: store.schedules }, {
      compile: compileCron,
      create: async (tasks) => void (await this.timers.createTasks(tasks)),
      planning: store.coordination?.schedulePlanning ?? null,
    });
    this.settlements = new Settlements(context, { timers: this.timers, flow, limits, random });
    this.pusher = push === null ? null : this.buildPusher(push);
  }

  private buildPusher(push: PushSetup): Pusher {
    // The pusher's workers reserve past the pull gate: the pushed topics' tasks are theirs.
    const pushHooks: WorkerHooks = {
      reserve: (topic, max, signal, ttrMs, watch) => {
        const { handOut } = this;
        const deliver = isPushLane(topic) ? (watch ? handOut.deliverTargetWatched : handOut.deliverTarget) : watch ? handOut.deliverWatched : handOut.deliver;
        return this.dispatcher.reserve(topic, max, signal, ttrMs, deliver);
      },
      remove: (id) => this.remove(id),
      watch: (d) => this.watch(d),
      hold: (held) => this.renewer.hold(held),
      drop: (held) => this.renewer.drop(held),
      settled: (topic, receipt) => this.settled(topic, receipt),
      observer: this.observer,
    };
    return new Pusher(this.context, {
      ports: push.ports,
      source: new QueueWorkSource(this.context, { runner: pushHooks, nack: this.settlements.nackDelivery, defer: (d, runAt) => this.defer(d, runAt) }),
      defaultSecret: push.defaultSecret,
      targetOf: (delivery) => this.handOut.targetOf(delivery),
    });
  }

  get phase(): RunnerPhase {
    return this.current;
  }

  /** What the engine holds, for stats(): the wheel, the ready backlog, long-polls, lateness, push. */
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
      lateness: this.handOut.latenessSummary(),
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

  /** A delivery of `topic` (its receipt) was settled (acked, nacked, deferred): its flow slot is freed. */
  settled(topic: string, receipt: string): void {
    this.flow.settled(topic, receipt);
  }

  /**
   * Gives a delivery's reservation back uncounted, due again at `runAt` (the Pusher's
   * circuit breaker, a worker closed before its handler ended). A reservation that moved on
   * meanwhile is left alone.
   */
  async defer(delivery: Pick<Delivery, 'id' | 'topic' | 'receipt'>, runAt: number): Promise<void> {
    const { store, clock, inFlight, logger } = this.context;
    const outcome = await inFlight.track(store.tasks.defer({ id: delivery.id, receipt: delivery.receipt, runAt, now: clock.now() }));
    if (outcome.status === 'deferred') {
      this.settled(delivery.topic, delivery.receipt);
      this.timers.move(outcome.ref);
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
    const deliver = watch ? this.handOut.deliverWatched : this.handOut.deliver;
    if (this.pusher === null) return this.dispatcher.reserve(topic, max, signal, ttrMs, deliver);
    // Pull consumers get nothing of a topic with a push subscription.
    return this.pusher.pull(topic, signal, (gated) => this.dispatcher.reserve(topic, max, gated, ttrMs, deliver));
  }

  /**
   * A pull consumer's reserve (EngineQueue.reserve): waits up to `waitMs` for a due task, or
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

  /** Forgets the task's timer, whichever kind (it was cancelled, moved or settled). */
  remove(id: string): void {
    this.timers.remove(id);
  }

  /**
   * Forgets the run timers of purged pending tasks (TopicPurgeStep.runs): in the wheel, and
   * those due waiting for a consumer (by `final`, the purge's end, at the latest).
   */
  forgetRuns(refs: readonly TimerRef[], final: boolean): void {
    this.timers.removeRuns(refs);
    this.dispatcher.forget(refs, final);
  }

  hold(held: Held): void {
    this.renewer.hold(held);
  }

  drop(held: Held): void {
    this.renewer.drop(held);
  }

  /** Arms the reservation's TTR timer: if it is neither acked nor nacked by then, it expires. */
  watch(delivery: Delivery): void {
    this.timers.watch(delivery);
  }

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
      .track(store.tasks.get(id))
      .then((record) => typeof record?.url === 'string' && this.pusher?.warm(record.url))
      .catch(() => undefined);
  }

  /** Timers due: run timers to the dispatcher (and a push lane's to the Pusher), ttr timers to the expirer. */
  private readonly onDue = (due: TimerRef[]): void => {
    this.dispatcher.dispatch(due);
    for (const ref of due) {
      if (ref.kind === 'ttr') {
        // A handler here that still holds it is told first (renewer.ts), then the store decides.
        if (ref.receipt !== null) this.renewer.expiring(ref.receipt);
        this.expirer.expire(ref);
      }
      // Whichever process's wheel a push lane's task falls due in consumes that lane (pusher.ts).
      else if (this.pusher !== null && isPushLane(ref.topic)) this.pusher.laneDue(ref.topic);
    }
  };
}
