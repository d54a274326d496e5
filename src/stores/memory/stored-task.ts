/** A task as the memory store keeps it, and the run refs that point back at it. */
import type { RunTimerHandle, RunTimerIndex } from '../../core/ports/index.js';
import type { AttemptEntry } from '../../core/task/history.js';
import { laneOf, type TaskRecord, type TaskState, type TimerRef } from '../../core/task/model.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The reservation is held as numbers, not as a receipt string and a nullable time: a task
 * lives long (in V8's old generation) while a receipt is new on every delivery, and each
 * such old-to-new pointer is work for every young-generation collection; at 100,000
 * deliveries a second that was most of the collector's pause. The receipt string is rebuilt
 * from the numbers when asked for (receipts.ts).
 */
export interface StoredTask extends Mutable<Omit<TaskRecord, 'receipt' | 'reservedUntil'>> {
  /** Replaced, never changed in place (an empty one is shared): get hands it out as is. */
  history: readonly AttemptEntry[];
  /** TaskRecord.trace, always present here (null for none). */
  trace: string | null;
  /** TaskRecord.priority, always present here (0 for none). */
  priority: number;
  seq: number;
  /** The counters of the task's topic, held here so a state change needs no map lookup. */
  counts: Record<TaskState, number>;
  /** The topic's pending tasks by minute of runAt (dueHistogram), held here like counts. */
  dueMinutes: Map<number, number>;
  /**
   * The current reservation's serial number; 0 when never reserved. Kept when the task is
   * acked (a completed task remembers the reservation that completed it, so the same ack
   * sent again answers 'acked'); cleared when an attempt fails. Only a `reserved` task
   * has a current receipt.
   */
  reservation: number;
  /** When the current reservation runs out; NaN when not reserved (always a number). */
  reservedUntil: number;
  /**
   * The engine's run timer for this task (MemoryStore.runTimers): kept on the task, so scheduling and
   * firing a timer need no map by id (a delete from a map of every pending timer was the
   * largest single cost of a delivery).
   */
  runTimer: RunTimerHandle | undefined;
}

/** A run ref of this store: it carries the task itself (`task`), which the store reads back without a lookup. */
interface OwnRunRef extends TimerRef {
  readonly task: StoredTask;
}

export function runRef(task: StoredTask): TimerRef {
  const ref: OwnRunRef = { id: task.id, topic: laneOf(task.topic, task.url), kind: 'run', dueAt: task.runAt, seq: task.seq, receipt: null, priority: task.priority, task };
  return ref;
}

/** The task a run ref of this store carries; undefined for any other ref. */
export function taskOfRef(ref: TimerRef): StoredTask | undefined {
  return (ref as Partial<OwnRunRef>).task;
}

/**
 * The engine's run timers kept on the tasks themselves (TaskStore's RunTimerIndex): a ref of
 * this store finds its task without a lookup, any other ref or a bare id through `byId`.
 * The store writes the field; the engine only calls these.
 */
export function runTimersOnTasks(byId: (id: string) => StoredTask | undefined): RunTimerIndex {
  const taskFor = (ref: TimerRef): StoredTask | undefined => taskOfRef(ref) ?? byId(ref.id);
  return {
    get: (ref) => taskFor(ref)?.runTimer,
    set: (ref, handle) => {
      const task = taskFor(ref);
      if (task === undefined) return false;
      task.runTimer = handle;
      return true;
    },
    take: (id, ref) => {
      const task = ref === undefined ? byId(id) : taskFor(ref);
      const held = task?.runTimer;
      if (task !== undefined) task.runTimer = undefined;
      return held;
    },
  };
}
