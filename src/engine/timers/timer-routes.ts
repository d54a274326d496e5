/**
 * Where every timer the engine learns of goes: a task created, moved or retried, a
 * reservation made or extended, a timer loaded, or one a shared store hands over. Into the
 * wheel when it falls within the loaded window; to `due` at once when it is due already;
 * nowhere when it lies beyond the window (the loader reads it when its time comes near).
 * Tasks are created through here too (`createTasks`: the facade's schedule and the recurring
 * occurrences), so a new task's timer has one way in, and a moved one another (`move`).
 *
 * Nothing is placed once the runner is sealed (the store is about to close).
 */
import { onPartial } from '../../core/partial-batch.js';
import type { RemoteTimerSource, ScheduleOutcome } from '../../core/ports/index.js';
import { isPushLane, type Delivery, type NewTaskRecord, type TimerRef } from '../../core/task/model.js';
import type { LoopContext } from '../loop-context.js';
import type { NoticeTimers } from './notice-timers.js';
import type { TimerDriver } from './timer-driver.js';

export interface TimerRoutesParams {
  readonly driver: TimerDriver;
  /** Where the loaded window ends now (Loader.loadTarget): a timer at or beyond it is the loader's. */
  readonly window: () => number;
  /** Whether timers are still placed (the runner is not sealed). */
  readonly open: () => boolean;
  /** Timers due already: handed on at once, as the driver hands on those that fire. */
  readonly due: (refs: TimerRef[]) => void;
  /** The timers other processes' messages tell of (notice-timers.ts). */
  readonly notices: NoticeTimers;
  /** A timer of a push lane was loaded: its task's own url may want the push transport warmed. */
  readonly pushLaneLoaded: (id: string) => void;
}

export class TimerRoutes {
  constructor(
    private readonly context: Pick<LoopContext, 'store' | 'clock' | 'inFlight' | 'observer' | 'events'>,
    private readonly params: TimerRoutesParams,
  ) {}

  /**
   * Creates tasks (an id that exists is left as it is: a retried call, an occurrence another
   * process made first), counts those created, and places their timers: the one way a new
   * task's timer comes in.
   */
  async createTasks(tasks: readonly NewTaskRecord[]): Promise<ScheduleOutcome[]> {
    const { store, clock, inFlight, observer, events } = this.context;
    const now = clock.now();
    const settle = (outcomes: readonly (ScheduleOutcome | undefined)[]): void => {
      for (let i = 0; i < outcomes.length; i++) {
        const outcome = outcomes[i];
        if (outcome === undefined) continue;
        if (outcome.created) {
          observer.scheduled(tasks[i]!.topic, 1);
          events.emit({ type: 'scheduled', id: outcome.id, topic: tasks[i]!.topic, attempt: 0, at: now, runAt: outcome.runAt });
        }
        if (outcome.ref === null) continue;
        // A ref not created now is a task already pending: its timer may be in the wheel already.
        if (outcome.created) this.place(outcome.ref, true);
        else this.placeLoaded(outcome.ref);
      }
    };
    // A partition that could not be written fails only its tasks: the others are stored and
    // get their timers all the same.
    const outcomes = await inFlight.track(store.tasks.schedule(tasks, now)).catch((error: unknown) => onPartial(error, settle));
    settle(outcomes);
    return outcomes;
  }

  /**
   * Puts a timer where it belongs (see the header), replacing the task's timer if any.
   * `created`: the task is new, so it has no timer to replace yet.
   */
  readonly place = (ref: TimerRef, created = false): void => {
    const { driver, window, open, due } = this.params;
    if (!open() || ref.dueAt >= window()) return;
    const held = created ? driver.addNew(ref) : driver.add(ref);
    if (!held) due([ref]);
  };

  /** A timer read by the loader or handed over by a shared store: it may be in the wheel already. */
  readonly placeLoaded = (ref: TimerRef): void => {
    if (isPushLane(ref.topic)) this.params.pushLaneLoaded(ref.id);
    if (!this.params.driver.holds(ref)) this.place(ref);
  };

  /**
   * A timer a shared store hands over: read from the store (a partition taken over, a
   * reservation that ran out elsewhere), placed like a loaded one; or told by another
   * process's message, which may only make the engine look again (notice-timers.ts).
   * Neither may throw here, in the store's listener: a time that is not a whole number is dropped.
   */
  readonly placeRemote = (ref: TimerRef, source: RemoteTimerSource): void => {
    if (source === 'notice') this.params.notices.place(ref);
    else if (Number.isSafeInteger(ref.dueAt)) this.placeLoaded(ref);
  };

  /** The task's timer moved (rescheduled, retried, deferred): the old one goes, the new one is placed. */
  move(ref: TimerRef): void {
    this.params.driver.remove(ref.id);
    this.place(ref);
  }

  /** Forgets the task's timer, whichever kind (it was cancelled, moved or settled). */
  remove(id: string): void {
    this.params.driver.remove(id);
  }

  /** Forgets the run timers of purged pending tasks (TopicPurgeStep.runs) held in the wheel. */
  removeRuns(refs: readonly TimerRef[]): void {
    for (const ref of refs) this.params.driver.removeRun(ref);
  }

  /**
   * A reservation was extended to `reservedUntil`: the ttr timer this process holds for it
   * (the same receipt) moves there. A timer held elsewhere (the owner of the task's shard)
   * learns it when it fires: the store answers `held` (tasks/expirer.ts).
   */
  extended(id: string, receipt: string, reservedUntil: number): void {
    const held = this.params.driver.ttrTimerOf(id);
    if (held !== undefined && held.receipt === receipt) this.place({ ...held, dueAt: reservedUntil });
  }

  /** Arms the reservation's TTR timer: if it is neither acked nor nacked by then, it expires. */
  watch(delivery: Delivery): void {
    this.place({ id: delivery.id, topic: delivery.topic, kind: 'ttr', dueAt: delivery.reservedUntil, seq: 0, receipt: delivery.receipt });
  }
}
