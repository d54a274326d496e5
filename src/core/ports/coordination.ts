/**
 * The coordination parts a store may have: the shared part of a store several processes
 * open (`store.shared`), and timer homes on a store's own task objects (`store.timerHomes`).
 */
import type { ReservedTask, TimerRef } from '../task/model.js';
import type { TimerHandle } from '../wheel/timer.js';

/**
 * The coordination part of a store that several engine processes share (Redis): its
 * `shared`. Each process keeps in its wheel only the timers of the store partitions it
 * owns; due tasks go into shared ready lists instead of the process's own ready queue, so
 * consumers in any process reserve them.
 */
export interface SharedDispatch {
  /**
   * Makes due 'run' timers available to every process's consumers. Refs of tasks no
   * longer pending and due, or of partitions this process does not own, are ignored (the
   * owner has them). A rejection means nothing may have been made ready: retry the refs;
   * a PartialBatchError (one outcome per ref) means the refs with an undefined outcome
   * were not, and only those are retried (their partitions could not be written).
   */
  promote(refs: readonly TimerRef[], now: number): Promise<void>;
  /**
   * Reserves up to `max` ready tasks of `topic`, as `reserve` does (new receipt,
   * reservedUntil = now() + (ttrMs ?? the task's ttrMs)); waits until one is ready or
   * `signal` aborts (then resolves with []). `now` is read at each reservation, not at the
   * call. A store may reserve more than asked and keep the surplus for this process's next
   * call of the topic (Redis' prefetch), unless `exact`: then it reserves at most `max`, and
   * leaves the rest to every process (a limited topic's admission, topic-flow.ts).
   */
  reserveReady(topic: string, max: number, now: () => number, ttrMs: number | undefined, signal: AbortSignal, exact?: boolean): Promise<ReservedTask[]>;
  /**
   * Registers the receiver of timers this process must now keep although it did not
   * create them: near-window tasks scheduled by other processes into its partitions, the
   * timers of partitions it takes over, and reservations that ran out in a dead process.
   * `source` says where a timer comes from: `store`, read from the store (it replaces the
   * task's timer, as a loaded one does), or `notice`, a message another process sent
   * (NOTIFY, PUBLISH), which anyone who can reach the store may forge: the store checked its
   * shape and bounds, but not that it is true, so it may only make the engine look again at
   * that time, never take the place of a timer the task has.
   */
  onRemoteTimer(listener: (ref: TimerRef, source: RemoteTimerSource) => void): void;
  /**
   * Messages from other processes (NOTIFY, PUBLISH) dropped as malformed since the store
   * opened, by channel (`timers`, `ready`); each channel the store listens on is listed, 0
   * until one is dropped. Read by the metrics (delayq_bad_notices_total).
   */
  badNotices?(): ReadonlyMap<string, number>;
  /** Which recurring schedules this process plans (see SchedulePlanning). */
  readonly schedulePlanning: SchedulePlanning;
}

/** Where a remote timer comes from (SharedDispatch.onRemoteTimer): read from the store, or told by another process's message. */
export type RemoteTimerSource = 'store' | 'notice';

/**
 * Which process plans which recurring schedule, on a store several processes share. Each
 * schedule id falls into one partition (the store's own router, fixed for a namespace); the
 * process that holds a partition's lease plans its schedules, the others leave them alone,
 * so N processes do a schedule's planning once instead of N times. The store's
 * compare-and-swap of schedules stays the safety net: two processes that both believe they
 * own a partition for a moment (a lease taken over from a stalled process) create each
 * occurrence once.
 */
export interface SchedulePlanning {
  /** The partition of a schedule id: the same in every process of the namespace. */
  partitionOf(scheduleId: string): number;
  /** This process holds the partition now, and plans its schedules. */
  owns(partition: number): boolean;
  /**
   * Registers the receiver of ownership changes: `owned` true when this process took the
   * partition (a share given up by another process, or the lease of a process that died ran
   * out), false when it gave it up or found it taken. Not called for the partitions taken
   * while the store opened.
   */
  onChange(listener: (partition: number, owned: boolean) => void): void;
  /**
   * At most how long after a process dies another one owns its partitions. The schedules of
   * a taken partition may have gone unplanned that long: their occurrences within it are not
   * misfires (a process did run), and the new owner creates them, late.
   */
  readonly takeoverMs: number;
}

/** The engine's handle on a task's run timer (the wheel's own handle). */
export type RunTimerHandle = TimerHandle<TimerRef>;

/** A slot on a task, lent to the engine for that task's run timer. */
export interface TimerHome {
  /** Written and cleared by the engine only; a store creates it undefined and never reads it. */
  runTimer: RunTimerHandle | undefined;
}

/** A run ref of a store with timer homes: it carries its task's home. */
export interface HomedRunRef extends TimerRef {
  readonly home: TimerHome;
}

/**
 * Optional capability of a store that keeps its tasks as objects in memory (the memory
 * store): it lends the engine a slot on each task for the task's run timer, so the engine
 * keeps those timers in no map by id of its own, and scheduling and firing a timer touch
 * no map at all. Every 'run' ref such a store hands out is a `HomedRunRef`; its 'ttr' refs
 * carry no home (the engine keeps reservation timers by id). A store that has it sets its
 * `timerHomes`.
 */
export interface TimerHomes {
  /**
   * The home of task `id`'s run timer, or undefined for an unknown id: how the engine finds
   * a timer when a task is cancelled, rescheduled or settled by id. Synchronous: it is asked
   * on the engine's own path.
   */
  timerHome(id: string): TimerHome | undefined;
}
