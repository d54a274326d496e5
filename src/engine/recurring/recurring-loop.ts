/**
 * The recurring schedule loop: keeps every active recurring schedule ahead of time. For each one it
 * plans (core/schedule/plan.ts: misfire first, then the occurrences due within the lead),
 * creates the occurrences as ordinary pending tasks with ids derived from the schedule and
 * the time (`<schedule id>:<ms>`), and only then moves the schedule forward with a
 * compare-and-swap (RecurringScheduleStore.swapSchedules).
 *
 * Why this gives each occurrence exactly once:
 * - creating a task whose id exists changes nothing (ProducerStore.schedule), so a plan
 *   made twice (two processes, a restart between creating and swapping, a retry after a
 *   failed swap) creates each occurrence once;
 * - the swap moves the schedule only from the state the plan started from, so no
 *   occurrence is planned from a state another process has moved past, and a change made
 *   meanwhile (upsert, pause, remove) is never overwritten. A failed swap re-reads the
 *   schedule and plans again from what is stored.
 *
 * Every process runs this loop. On a store one process has to itself (memory, SQLite) it
 * plans every schedule. On a store several processes share (`store.coordination`), it plans the
 * schedules of the partitions whose lease it holds (SchedulePlanning), so each schedule is
 * planned by one process, not by all of them; the swap stays the safety net for the moment
 * two processes both believe they own a partition. Two more cases:
 * - a partition taken over (its owner died or gave it up): the copies of its schedules
 *   this process holds are stale (the owner moved them since), so it re-reads them first,
 *   then plans them, treating the occurrences of the last `takeoverMs` as not missed: they
 *   went uncreated because their planner died, not because no process ran (an example in
 *   ADR 0035); a misfire policy applies only to older ones.
 * - a schedule changed through this process in a partition it does not own: it plans it for
 *   twice `scheduleSyncMs`, the time the owner takes to read the change (planning-share.ts).
 *
 * The loop reads all schedules at start and again when the store's schedulesVersion has
 * moved (checked every `scheduleSyncMs`); between reads it wakes when the earliest schedule
 * it plans needs a plan (its latest occurrence comes within `scheduleLeadMs`).
 */
import { PartialBatchError } from '../../core/partial-batch.js';
import type { Clock, Logger, RecurringScheduleStore, SchedulePlanning, TimerToken } from '../../core/ports/index.js';
import { occurrenceId, withState, type RecurringScheduleRecord } from '../../core/schedule/model.js';
import { planDueAt, planOccurrences, type PlanOptions } from '../../core/schedule/plan.js';
import type { CronCompiler, NextOccurrence } from '../../core/schedule/rule.js';
import type { NewTaskRecord } from '../../core/task/model.js';
import { MAX_TIMER_DELAY_MS } from '../../core/options.js';
import type { InFlight } from '../in-flight.js';
import type { LoopContext } from '../loop-context.js';
import { KnownSchedules, type Entry } from './known-schedules.js';
import { PlanningShare } from './planning-share.js';

export interface ScheduleLoopOptions extends PlanOptions {
  readonly syncMs: number;
  readonly retryMs: number;
}

/** The part of the engine's context the loop reads: of the store, its recurring schedules only. */
export type RecurringLoopContext = Pick<LoopContext, 'clock' | 'logger' | 'inFlight' | 'tuning'> & { readonly store: RecurringScheduleStore };

/** Creates tasks (ids that exist are left as they are) and places their timers. */
export type CreateTasks = (tasks: readonly NewTaskRecord[]) => Promise<void>;

/**
 * A pass plans the schedules due within this much of now too (see planDue). 25 ms and not
 * 100 or 250: smaller passes, each a shorter stretch in which planning holds the event loop
 * and the store while occurrences are being delivered (ADR 0030, ADR 0033).
 */
const PLAN_WINDOW_MS = 25;
/**
 * Tasks per create call and schedules per swap call: each a short store call that
 * deliveries interleave with (100 and not 250 or 1,000: the spread p99 lateness, ADR 0030,
 * ADR 0033).
 */
const CREATE_BATCH = 100;
export class RecurringScheduleLoop {
  /** The schedules this process holds (RecurringSchedules reads their rules and counts through it). */
  readonly known: KnownSchedules;
  private running = false;
  private wakeTimer: TimerToken | null = null;
  private wakeAt = Infinity;
  private syncTimer: TimerToken | null = null;
  private pass: Promise<void> | null = null;
  private again = false;
  private stopped: Promise<void> = Promise.resolve();
  /** Schedules applied in this turn, planned together on the next (see planSoon). */
  private batch: { entries: Entry[]; done: Promise<void> } | null = null;
  /** Which schedules this process plans (all of them on a store it has to itself). */
  private readonly share: PlanningShare;

  private readonly store: RecurringScheduleStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly inFlight: InFlight;
  private readonly options: ScheduleLoopOptions;
  private readonly compile: CronCompiler;
  private readonly create: CreateTasks;

  constructor(context: RecurringLoopContext, { compile, create, planning }: { compile: CronCompiler; create: CreateTasks; planning: SchedulePlanning | null }) {
    ({ store: this.store, clock: this.clock, logger: this.logger, inFlight: this.inFlight } = context);
    const { tuning } = context;
    this.options = { leadMs: tuning.scheduleLeadMs, graceMs: tuning.scheduleGraceMs, syncMs: tuning.scheduleSyncMs, retryMs: tuning.storeRetryMs };
    this.compile = compile;
    this.create = create;
    this.share = new PlanningShare(
      planning,
      { clock: this.clock, logger: this.logger, retryMs: tuning.storeRetryMs, adoptMs: 2 * tuning.scheduleSyncMs },
      { reread: (partitions) => this.known.reread(partitions), replan: () => this.runPass() },
    );
    this.known = new KnownSchedules({ store: this.store, logger: this.logger, inFlight: this.inFlight, compile, share: this.share, leadMs: this.options.leadMs });
  }

  start(): void {
    this.running = true;
    this.share.start();
    this.sync();
  }

  /** Stops waking; resolves once a pass in progress has ended. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.wakeTimer !== null) this.clock.clearTimer(this.wakeTimer);
    if (this.syncTimer !== null) this.clock.clearTimer(this.syncTimer);
    this.wakeTimer = this.syncTimer = null;
    await this.stopped;
    await this.share.stop();
  }

  /**
   * A schedule changed through this process (upserted, paused, resumed): plans it now, and
   * resolves once its due occurrences exist (an upsert answers with those due within the lead pending).
   */
  async apply(record: RecurringScheduleRecord, next: NextOccurrence = this.known.ruleOf(record)): Promise<RecurringScheduleRecord> {
    const [planned] = await this.applyMany([record], [next]);
    return planned!;
  }

  /**
   * True when nothing of `record` is to be created yet: its next occurrence to create is
   * further off than the lead (a new schedule whose first time is more than 1.5 s away).
   */
  plansNothingNow(record: RecurringScheduleRecord, now: number): boolean {
    const at = planDueAt(record, now, this.options.leadMs);
    return at === null || at > now;
  }

  /** `apply` of several schedules (an upsert batch), with one wait for their shared plan. */
  async applyMany(records: readonly RecurringScheduleRecord[], rules: readonly NextOccurrence[]): Promise<RecurringScheduleRecord[]> {
    const entries = records.map((record, i) => this.known.set(record, rules[i]!));
    if (!this.running) return [...records];
    this.share.changedHere(entries.map((entry) => ({ partition: entry.partition, id: entry.record.id })), this.clock.now());
    // Nothing to create yet (an import of schedules that start later): no turn spent waiting
    // for a plan; the wake-up below plans them when their time comes.
    const applied = this.clock.now();
    if (!records.every((record) => this.plansNothingNow(record, applied))) await this.planSoon(entries);
    // Only these schedules' wake-ups can have moved earlier: no pass over every schedule per call.
    const now = this.clock.now();
    let earliest = Infinity;
    const planned = records.map((record) => {
      const current = this.known.get(record.id);
      const at = current === undefined ? null : planDueAt(current.record, now, this.options.leadMs);
      if (at !== null && at < earliest) earliest = at;
      return current?.record ?? record;
    });
    this.setWake(earliest);
    return planned;
  }

  /**
   * For schedules about to be created: creates their first occurrences now and answers the
   * records moved forward past them, to be stored as they are (one write instead of a write
   * and a swap). Creating before storing is safe as the loop's own order is: an occurrence
   * id exists once however often it is created, and a store failure leaves tasks that a
   * retried upsert (same ids) finds. Without a running loop, the records as given.
   */
  async createAhead(records: readonly RecurringScheduleRecord[], rules: readonly NextOccurrence[]): Promise<RecurringScheduleRecord[]> {
    if (!this.running) return [...records];
    const now = this.clock.now();
    const tasks: NewTaskRecord[] = [];
    const planned = records.map((from, i) => {
      const plan = planOccurrences(from, rules[i]!, now, this.options);
      this.pushTasks(tasks, from, plan.create);
      return withState(from, plan.state);
    });
    for (let i = 0; i < tasks.length; i += CREATE_BATCH) await this.create(tasks.slice(i, i + CREATE_BATCH));
    return planned;
  }

  private pushTasks(tasks: NewTaskRecord[], from: RecurringScheduleRecord, times: readonly number[]): void {
    for (const at of times) {
      const task: NewTaskRecord = { id: occurrenceId(from.id, at), topic: from.topic, payload: from.payload, runAt: at, maxAttempts: from.maxAttempts, ttrMs: from.ttrMs, backoff: from.backoff };
      const withUrl = from.url === null ? task : { ...task, url: from.url };
      tasks.push(from.priority === 0 ? withUrl : { ...withUrl, priority: from.priority });
    }
  }

  /**
   * Plans `entries` together with the others applied in the same turn of the event loop:
   * concurrent upserts (an import of 10,000 schedules) share one create and one swap call.
   */
  private planSoon(entries: readonly Entry[]): Promise<void> {
    if (this.batch === null) {
      const batched: Entry[] = [];
      const done = new Promise<void>((resolve, reject) => {
        setImmediate(() => {
          this.batch = null;
          this.planMany(batched, this.clock.now()).then(resolve, reject);
        });
      });
      this.batch = { entries: batched, done };
    }
    for (const entry of entries) this.batch.entries.push(entry);
    return this.batch.done;
  }

  private sync(): void {
    this.syncTimer = null;
    if (!this.running) return;
    void this.known
      .readIfChanged()
      .then((read) => read && this.runPass())
      .catch((error: unknown) => this.logger.error({ err: error }, 'schedules: reading the schedules failed'))
      .finally(() => {
        if (this.running) this.syncTimer = this.clock.setTimer(() => this.sync(), this.options.syncMs);
      });
  }

  /** One pass over the due schedules at a time; a pass asked for meanwhile runs after it. */
  private runPass(): void {
    if (!this.running) return;
    if (this.pass !== null) {
      this.again = true;
      return;
    }
    this.pass = this.planDue()
      .catch((error: unknown) => {
        this.logger.error({ err: error }, 'schedules: creating occurrences failed; retrying');
        this.retryIn(this.options.retryMs);
      })
      .finally(() => {
        this.pass = null;
        if (this.again) {
          this.again = false;
          this.runPass();
        } else this.arm();
      });
    this.stopped = this.pass;
  }

  private async planDue(): Promise<void> {
    const now = this.clock.now();
    // Everything due within the window is planned in this pass, a window further ahead: a few
    // passes (and store calls) a second however the schedules' times are spread.
    const due: Entry[] = [];
    for (const entry of this.known.values()) {
      if (!this.share.plans(entry.partition, entry.record.id, now)) continue;
      const at = this.known.dueAt(entry, now);
      if (at !== null && at <= now + PLAN_WINDOW_MS) due.push(entry);
    }
    if (due.length === 0) return;
    await this.planMany(due, now, this.options.leadMs + PLAN_WINDOW_MS);
  }

  /** Plans the entries, creates all their occurrences, then swaps each forward. */
  private async planMany(given: readonly Entry[], now: number, leadMs = this.options.leadMs): Promise<void> {
    // One plan per schedule: the entry applied last stands for its id.
    const entries = given.length < 2 ? given : [...new Map(given.map((e) => [e.record.id, e])).values()];
    const planned: Array<{ entry: Entry; from: RecurringScheduleRecord; to: RecurringScheduleRecord; tasks: readonly [number, number] }> = [];
    const tasks: NewTaskRecord[] = [];
    const options = { ...this.options, leadMs };
    for (const entry of entries) {
      const from = entry.record;
      const extraGraceMs = this.share.extraGraceMs(from.id);
      const plan = planOccurrences(from, entry.next, now, extraGraceMs === 0 ? options : { ...options, graceMs: options.graceMs + extraGraceMs });
      if (plan.skipped > 0) this.logger.warn({ schedule: from.id, skipped: plan.skipped, misfire: from.misfire }, 'schedules: occurrences missed while no process ran were not created');
      const to = withState(from, plan.state);
      if (to.nextAt === from.nextAt && to.lastAt === from.lastAt && to.count === from.count) {
        this.share.caughtUp(from.id);
        continue;
      }
      const first = tasks.length;
      this.pushTasks(tasks, from, plan.create);
      planned.push({ entry, from, to, tasks: [first, tasks.length] });
    }
    // A store cut into partitions may create the occurrences of some and not others (one
    // that cannot take writes): the schedules whose occurrences were all created move on,
    // the others stay where they are and are planned again after retryMs.
    const failed = new Set<number>();
    for (let i = 0; i < tasks.length; i += CREATE_BATCH)
      await this.create(tasks.slice(i, i + CREATE_BATCH)).catch((error: unknown) => {
        if (!(error instanceof PartialBatchError)) throw error;
        error.outcomes.forEach((outcome, k) => outcome === undefined && failed.add(i + k));
      });
    const moving = failed.size === 0 ? planned : planned.filter(({ tasks: [from, to] }) => !Array.from({ length: to - from }, (_, k) => from + k).some((t) => failed.has(t)));
    if (moving.length < planned.length) {
      this.logger.warn({ schedules: planned.length - moving.length }, 'schedules: some occurrences could not be created (their store partition cannot take writes); those schedules are planned again');
      const until = this.clock.now() + this.options.retryMs;
      for (const { entry } of planned) if (!moving.some((m) => m.entry === entry)) this.known.holdUntil(entry.record.id, until);
    }
    const swapped: boolean[] = [];
    for (let i = 0; i < moving.length; i += CREATE_BATCH)
      swapped.push(...(await this.inFlight.track(this.store.swapSchedules(moving.slice(i, i + CREATE_BATCH).map(({ from, to }) => ({ expected: from, next: to }))))));
    const stale: Entry[] = [];
    moving.forEach(({ entry, to }, i) => {
      if (swapped[i]) {
        entry.record = to;
        this.share.caughtUp(to.id);
      } else stale.push(entry);
    });
    // Moved or changed by another process, or removed: plan again from what is stored.
    await this.known.refresh(stale);
    if (stale.length > 0) this.again = true;
  }

  private retryIn(ms: number): void {
    this.setWake(this.clock.now() + ms);
  }

  /** Wakes at the earliest time a schedule needs a plan. */
  private arm(): void {
    if (!this.running) return;
    const now = this.clock.now();
    let earliest = Infinity;
    for (const entry of this.known.values()) {
      if (!this.share.plans(entry.partition, entry.record.id, now)) continue;
      const at = this.known.dueAt(entry, now);
      if (at !== null && at < earliest) earliest = at;
    }
    this.setWake(earliest);
  }

  private setWake(at: number): void {
    if (!this.running || at === Infinity) return;
    if (this.wakeTimer !== null && this.wakeAt <= at) return;
    if (this.wakeTimer !== null) this.clock.clearTimer(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = this.clock.setTimer(() => {
      this.wakeTimer = null;
      this.wakeAt = Infinity;
      this.runPass();
    }, Math.min(MAX_TIMER_DELAY_MS, Math.max(0, at - this.clock.now())));
  }
}
