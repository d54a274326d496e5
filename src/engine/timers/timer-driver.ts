import { MAX_TIMER_DELAY_MS } from '../../core/options.js';
import { type Clock, type RunTimerHandle, type RunTimerIndex, type TimerToken } from '../../core/ports/index.js';
import type { TimerRef } from '../../core/task/model.js';
import { TimingWheel } from '../../core/wheel/timing-wheel.js';
import { IdMap } from './id-map.js';
import type { LoopContext } from '../loop-context.js';

export interface TimerDriverParams {
  /** Gets the due timers, in order. */
  readonly onDue: (refs: TimerRef[]) => void;
  /** The wheel's tick (EngineTuning.tickMs). Default 1 ms. */
  readonly tickMs?: number;
  /** Where the store keeps run timers, when it offers to (store.tasks.runTimers). */
  readonly runTimers?: RunTimerIndex | undefined;
}

/** Timers moved per split-ahead slice (see TimingWheel.splitAhead): short enough never to hold back a due delivery for long (ADR 0001). */
export const SPLIT_SLICE = 2_048;

/**
 * Drives the timing wheel with one re-armed timer: it sleeps until the wheel's next
 * deadline, advances the wheel to the current time and hands the due timers, in order,
 * to `onDue`. It keeps one timer per task id (a task is either waiting to run or
 * reserved, never both), so replacing a task's timer is a cancel and an insert; the one
 * exception is a timer another process's message told of (`hint`), which waits beside the
 * task's own rather than take its place.
 *
 * A timer's handle is kept by task id in `handles`, or, for a run ref of a store that keeps
 * run timers (`runTimers`, RunTimerIndex in core/ports/: the memory store, on its task
 * objects), by the store: then scheduling and firing touch no map at all: at high rates the
 * delete from a large map was the largest single cost of a delivery (ADR 0019). The driver
 * only calls the index's methods; where a handle lives is the store's business.
 *
 * Between deadlines it splits the wheel's next coarse buckets ahead of time, a slice per
 * turn of the event loop, so that no deadline has to split a large bucket all at once.
 */
export class TimerDriver {
  private readonly wheel: TimingWheel<TimerRef>;
  private readonly handles = new IdMap<RunTimerHandle>();
  /** The timers placed by `hint` still in the wheel, as their task's timer or beside it. */
  private readonly hints = new Set<TimerRef>();
  private timer: TimerToken | null = null;
  private armedFor = Number.POSITIVE_INFINITY;
  private running = false;
  private splitTimer: TimerToken | null = null;
  private readonly splitSlice = (): void => {
    this.splitTimer = null;
    if (!this.running) return;
    this.wheel.splitAhead(SPLIT_SLICE);
    this.splitLater();
    // A split can only make the first deadline later: re-arming saves a wake-up for nothing.
    this.arm();
  };

  private readonly clock: Clock;
  private readonly onDue: (refs: TimerRef[]) => void;
  /** The store, when it keeps run timers. */
  private readonly runTimers: RunTimerIndex | undefined;

  constructor(context: Pick<LoopContext, 'clock'>, { onDue, tickMs = 1, runTimers }: TimerDriverParams) {
    this.clock = context.clock;
    this.onDue = onDue;
    this.runTimers = runTimers;
    this.wheel = new TimingWheel<TimerRef>({ startMs: context.clock.now(), tickMs });
  }

  get size(): number {
    return this.wheel.size;
  }

  start(): void {
    this.running = true;
    this.arm();
  }

  stop(): void {
    this.running = false;
    this.disarm();
    if (this.splitTimer !== null) this.clock.clearTimer(this.splitTimer);
    this.splitTimer = null;
  }

  /**
   * Keeps `ref` until its dueAt, replacing any timer the task had. Returns false when it is
   * already due: the caller delivers it at once (the wheel never holds a due timer).
   */
  add(ref: TimerRef): boolean {
    this.remove(ref.id, ref);
    return this.addNew(ref);
  }

  /** `add` for a task that has no timer here yet (just created): skips the lookup. */
  addNew(ref: TimerRef): boolean {
    // Bring the wheel up to now first: an idle wheel's time is stale, and a task due now
    // must be handed back at once (after anything overdue), not via a zero-delay timer.
    if (ref.dueAt <= this.clock.now()) this.fireDue();
    const handle = this.wheel.add(ref.dueAt, ref);
    if (handle === undefined) return false;
    if (ref.kind !== 'run' || this.runTimers?.set(ref, handle) !== true) this.handles.set(ref.id, handle);
    if (ref.dueAt < this.armedFor) this.arm();
    this.splitLater();
    return true;
  }

  /**
   * A timer another process's message told of (SharedDispatch.onRemoteTimer, `notice`):
   * shaped right, but anyone who can reach the store may have sent it. It never takes the
   * place of the task's timer here: it is the task's timer when the task has none, and
   * otherwise waits beside it; each fires, and the store decides at each (a task is reserved
   * once, never before its runAt). A loaded timer replaces it like any other. Returns false
   * when it is due already: the caller hands it on at once.
   */
  hint(ref: TimerRef): boolean {
    const held = this.handles.get(ref.id)?.value;
    if (held !== undefined && held.kind === ref.kind && held.dueAt === ref.dueAt) return true;
    if (ref.dueAt <= this.clock.now()) this.fireDue();
    const handle = this.wheel.add(ref.dueAt, ref);
    if (handle === undefined) return false;
    this.hints.add(ref);
    if (held === undefined) this.handles.set(ref.id, handle);
    if (ref.dueAt < this.armedFor) this.arm();
    this.splitLater();
    return true;
  }

  /** How many timers placed by `hint` are in the wheel. */
  get hinted(): number {
    return this.hints.size;
  }

  /** True when the task's timer is exactly `ref` (same kind and time): a reload can skip it. */
  holds(ref: TimerRef): boolean {
    const current = (this.handles.get(ref.id) ?? (ref.kind === 'run' ? this.runTimers?.get(ref) : undefined))?.value;
    return current !== undefined && current.kind === ref.kind && current.dueAt === ref.dueAt && current.receipt === ref.receipt;
  }

  /** The task's ttr timer, when it has one here (ttr timers are kept by id, never in homes). */
  ttrTimerOf(id: string): TimerRef | undefined {
    const ref = this.handles.get(id)?.value;
    return ref?.kind === 'ttr' ? ref : undefined;
  }

  /**
   * Forgets the task's timer, whichever kind; `ref`: a ref of the task, when the caller has
   * one (the store may then find its run timer without a lookup). Returns the timer
   * forgotten (its ref names the task's topic), if there was one.
   */
  remove(id: string, ref?: TimerRef): TimerRef | undefined {
    let removed: TimerRef | undefined;
    const handle = this.handles.get(id);
    if (handle !== undefined) {
      this.handles.delete(id);
      this.wheel.cancel(handle);
      removed = handle.value;
      if (this.hints.size > 0) this.hints.delete(removed);
    }
    const held = this.runTimers?.take(id, ref?.kind === 'run' ? ref : undefined);
    if (held !== undefined) {
      this.wheel.cancel(held);
      removed = held.value;
    }
    return removed;
  }

  /**
   * Forgets the run timer of exactly the task `ref` names (same id and seq), a task since
   * deleted: a new task that took the id meanwhile keeps its own timer.
   */
  removeRun(ref: TimerRef): void {
    const handle = this.handles.get(ref.id);
    if (handle !== undefined && handle.value.kind === 'run' && handle.value.seq === ref.seq) {
      this.handles.delete(ref.id);
      this.wheel.cancel(handle);
      if (this.hints.size > 0) this.hints.delete(handle.value);
    }
    const held = this.runTimers?.get(ref);
    if (held !== undefined && held.value.seq === ref.seq) {
      this.runTimers!.take(ref.id, ref);
      this.wheel.cancel(held);
    }
  }

  /** Fires everything due now; the timer callback, and tests after a clock jump. */
  tick(): void {
    this.fireDue();
    this.arm();
    this.splitLater();
  }

  /** Queues a split-ahead slice for a later turn (one at a time), when there is work for one. */
  private splitLater(): void {
    if (this.splitTimer !== null || !this.running || !this.wheel.hasSplitWork()) return;
    this.splitTimer = this.clock.setTimer(this.splitSlice, 0);
  }

  private fireDue(): void {
    const due = this.wheel.advance(this.clock.now());
    for (const ref of due) {
      // The store forgets the handle of exactly this timer (a hint beside it is not it).
      if (ref.kind === 'run' && this.runTimers !== undefined && this.runTimers.get(ref)?.value === ref) this.runTimers.take(ref.id, ref);
      // A hint beside the task's timer leaves that timer's handle where it is.
      else if (this.hints.size === 0 || this.handles.get(ref.id)?.value === ref) this.handles.delete(ref.id);
      if (this.hints.size > 0) this.hints.delete(ref);
    }
    if (due.length > 0) this.onDue(due);
  }

  private arm(): void {
    if (!this.running) return;
    const deadline = this.wheel.nextDeadline();
    if (deadline === undefined) {
      this.disarm();
      return;
    }
    if (this.timer !== null && deadline === this.armedFor) return;
    this.disarm();
    // Node's setTimeout fires at once for longer delays (~24.8 days): re-arm instead.
    const delay = Math.min(MAX_TIMER_DELAY_MS, Math.max(0, deadline - this.clock.now()));
    this.armedFor = deadline;
    this.timer = this.clock.setTimer(() => {
      this.timer = null;
      this.armedFor = Number.POSITIVE_INFINITY;
      this.tick();
    }, delay);
  }

  private disarm(): void {
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
    this.armedFor = Number.POSITIVE_INFINITY;
  }
}
