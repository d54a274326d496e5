/**
 * The coordination parts a store may have: the shared part of a store several processes
 * open (`store.coordination`), and the index of the engine's run timers a store may keep
 * for it (`store.tasks.runTimers`).
 */
import type { ReservedTask, TimerRef } from '../task/model.js';
import type { TimerHandle } from '../wheel/timer.js';

/**
 * The coordination part of a store that several engine processes share (Redis,
 * PostgreSQL): its `coordination`. Each process keeps in its wheel only the timers of the
 * store partitions it owns; due tasks go into shared ready lists instead of the process's own ready queue, so
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

/**
 * Where a store keeps its tasks' run timer handles for the engine, when it offers to (the
 * memory store: on each task object, so scheduling and firing a timer touch no map by id;
 * ADR 0019). The engine only calls these methods and never sees where a handle lives; a
 * store without one (`store.tasks.runTimers` absent) leaves the engine to keep its run timers
 * in a map of its own. Synchronous: they are called on the engine's own path.
 */
export interface RunTimerIndex {
  /** The run timer held for the task `ref` names (its id; the ref may let the store skip a lookup). */
  get(ref: TimerRef): RunTimerHandle | undefined;
  /** Holds `handle` as the run timer of the task `ref` names; false when the store has no such task (the engine keeps the handle itself then). */
  set(ref: TimerRef, handle: RunTimerHandle): boolean;
  /** Forgets the run timer held for task `id` (`ref`: the run ref it was set for, when the caller has it) and returns it. */
  take(id: string, ref?: TimerRef): RunTimerHandle | undefined;
}

/** @deprecated since 0.x: the engine no longer writes into a store's objects; a store offers a `RunTimerIndex` (`store.tasks.runTimers`) instead. */
export interface TimerHome {
  runTimer: RunTimerHandle | undefined;
}

/** @deprecated since 0.x, see TimerHome. */
export interface HomedRunRef extends TimerRef {
  readonly home: TimerHome;
}

/** @deprecated since 0.x, see TimerHome: ignored by the engine. */
export interface TimerHomes {
  timerHome(id: string): TimerHome | undefined;
}
