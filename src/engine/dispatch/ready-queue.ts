/**
 * Due tasks waiting for a consumer, one FIFO per topic (per priority level for a topic that
 * has tasks of a priority other than 0: ADR 0057), plus the consumers waiting for
 * them (long-polls and workers). The wheel's timer callback only appends here and wakes
 * waiters; user code runs later, in the waiter's own continuation, so a slow handler
 * can never make the ticker drift.
 *
 * Items are hints, not reservations: a task listed here may have been cancelled or moved
 * since; the store's reserve decides. Losing the whole queue (a crash) loses nothing, because every
 * listed task is still `pending` and due in the store and is loaded again on start.
 */
import { dict } from '../../core/dict.js';
import type { TimerRef } from '../../core/task/model.js';

/** A due run timer, as the store handed it out (so the store's reserveRefs can use it). */
export type ReadyItem = TimerRef;

interface Waiter {
  readonly wake: () => void;
}

class Fifo {
  private items: ReadyItem[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: ReadyItem): void {
    this.items.push(item);
  }

  /** The first item's due time (the longest waiting), or undefined when empty. */
  get oldestDueAt(): number | undefined {
    return this.items[this.head]?.dueAt;
  }

  /** Drops the items `gone` names (by id and seq); answers how many went. O(length). */
  drop(gone: ReadonlySet<string>): number {
    const before = this.length;
    this.items = this.items.slice(this.head).filter((item) => !gone.has(runKey(item)));
    this.head = 0;
    return before - this.items.length;
  }

  dequeue(max: number): ReadyItem[] {
    const end = Math.min(this.items.length, this.head + max);
    const out = this.items.slice(this.head, end);
    this.head = end;
    // Compact once the consumed prefix dominates, so memory follows the backlog.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return out;
  }
}

/**
 * A lane's tasks of priorities other than 0: a FIFO per level, the levels kept sorted,
 * highest first. Only a lane that ever had such a task has one, so a lane without
 * priorities dequeues from its one FIFO as before.
 */
class Levels {
  readonly byLevel = new Map<number, Fifo>();
  /** The levels that have a FIFO, highest first. */
  order: number[] = [];
  length = 0;

  push(priority: number, item: ReadyItem): void {
    let fifo = this.byLevel.get(priority);
    if (fifo === undefined) {
      this.byLevel.set(priority, (fifo = new Fifo()));
      this.order = [...this.byLevel.keys()].sort((a, b) => b - a);
    }
    fifo.push(item);
    this.length++;
  }

  /** Up to `max` items of the levels above (`above`) or below 0, highest level first. */
  dequeue(max: number, above: boolean, out: ReadyItem[]): void {
    for (const level of this.order) {
      if (out.length >= max) return;
      if (above ? level <= 0 : level >= 0) continue;
      const fifo = this.byLevel.get(level)!;
      const items = fifo.dequeue(max - out.length);
      this.length -= items.length;
      for (const item of items) out.push(item);
    }
  }

  get oldestDueAt(): number | undefined {
    let oldest: number | undefined;
    for (const fifo of this.byLevel.values()) {
      const dueAt = fifo.oldestDueAt;
      if (dueAt !== undefined && (oldest === undefined || dueAt < oldest)) oldest = dueAt;
    }
    return oldest;
  }

  drop(gone: ReadonlySet<string>): number {
    let dropped = 0;
    for (const fifo of this.byLevel.values()) dropped += fifo.drop(gone);
    this.length -= dropped;
    return dropped;
  }
}

/** A run timer's identity: its task's id and seq (a task scheduled again under a freed id has another seq). */
function runKey(ref: TimerRef): string {
  return `${ref.seq}\u0000${ref.id}`;
}

/** A lane's ready tasks: the FIFO of priority 0 and, once it had any, the other levels. */
class LaneQueue {
  readonly base = new Fifo();
  levels: Levels | undefined;

  get length(): number {
    return this.levels === undefined ? this.base.length : this.base.length + this.levels.length;
  }

  get oldestDueAt(): number | undefined {
    const base = this.base.oldestDueAt;
    const other = this.levels?.oldestDueAt;
    return base === undefined ? other : other === undefined ? base : Math.min(base, other);
  }

  push(item: ReadyItem): void {
    const priority = item.priority;
    if (priority === undefined || priority === 0) this.base.push(item);
    else (this.levels ??= new Levels()).push(priority, item);
  }

  /** Higher priorities first; within one, the order they fell due. */
  dequeue(max: number): ReadyItem[] {
    const levels = this.levels;
    if (levels === undefined || levels.length === 0) return this.base.dequeue(max);
    const out: ReadyItem[] = [];
    levels.dequeue(max, true, out);
    if (out.length < max) for (const item of this.base.dequeue(max - out.length)) out.push(item);
    if (out.length < max) levels.dequeue(max, false, out);
    return out;
  }

  drop(gone: ReadonlySet<string>): number {
    return this.base.drop(gone) + (this.levels?.drop(gone) ?? 0);
  }
}

export class ReadyQueue {
  private readonly topics = new Map<string, LaneQueue>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  /** By topic, the items `forget` was told of and has not dropped yet. */
  private readonly forgotten = new Map<string, Set<string>>();
  private total = 0;
  private drainListeners: { readonly level: number; readonly resolve: () => void }[] = [];

  /** Tasks waiting for a consumer, over all topics. */
  get backlog(): number {
    return this.total;
  }

  /** The due time of each topic's longest-waiting task (a hint: it may have been cancelled since). */
  oldestByTopic(): Record<string, number> {
    const out = dict<number>();
    for (const [topic, fifo] of this.topics) {
      const dueAt = fifo.oldestDueAt;
      if (dueAt !== undefined) out[topic] = dueAt;
    }
    return out;
  }

  /** Tasks of `topic` waiting for a consumer. */
  sizeOf(topic: string): number {
    return this.topics.get(topic)?.length ?? 0;
  }

  backlogByTopic(): Record<string, number> {
    const out = dict<number>();
    for (const [topic, fifo] of this.topics) if (fifo.length > 0) out[topic] = fifo.length;
    return out;
  }

  push(topic: string, item: ReadyItem): void {
    let fifo = this.topics.get(topic);
    if (!fifo) this.topics.set(topic, (fifo = new LaneQueue()));
    fifo.push(item);
    this.total++;
    const waiting = this.waiters.get(topic);
    if (waiting && waiting.size > 0) {
      // Wake one waiter per item: each takes a batch, so waking all would stampede.
      const first = waiting.values().next().value as Waiter;
      waiting.delete(first);
      first.wake();
    }
  }

  dequeue(topic: string, max: number): ReadyItem[] {
    const fifo = this.topics.get(topic);
    if (!fifo || fifo.length === 0) return [];
    const items = fifo.dequeue(max);
    this.total -= items.length;
    if (fifo.length === 0) this.topics.delete(topic);
    if (this.drainListeners.length > 0) this.notifyDrain();
    return items;
  }

  /**
   * Forgets the items of tasks that are gone (a purge deleted them: TopicPurgeStep.runs), by
   * id and seq, so the backlog and the oldest item's age (the ready gauges) stop counting
   * them, instead of counting them until a consumer next dequeues them. A topic's FIFO is
   * filtered once as many are to go as it holds, and at `final` (the purge ended): so a
   * purge costs O(its tasks + the FIFO) in all, where a filter per step of 500 made a purge
   * of 100,000 ready tasks 17x slower (quadratic), and what waits to be dropped is never
   * more than the FIFO itself.
   */
  forget(refs: readonly TimerRef[], final: boolean): void {
    const touched = new Set<string>();
    for (const ref of refs) {
      let keys = this.forgotten.get(ref.topic);
      if (keys === undefined) this.forgotten.set(ref.topic, (keys = new Set()));
      keys.add(runKey(ref));
      touched.add(ref.topic);
    }
    let dropped = 0;
    for (const topic of final ? [...this.forgotten.keys()] : touched) {
      const keys = this.forgotten.get(topic)!;
      const fifo = this.topics.get(topic);
      if (!final && fifo !== undefined && keys.size < fifo.length) continue;
      this.forgotten.delete(topic);
      if (fifo === undefined) continue;
      dropped += fifo.drop(keys);
      if (fifo.length === 0) this.topics.delete(topic);
    }
    this.total -= dropped;
    if (dropped > 0 && this.drainListeners.length > 0) this.notifyDrain();
  }

  /**
   * Resolves when `topic` has an item, or when `signal` aborts. The waiter is woken at most
   * once; it then calls dequeue() itself (another consumer may have been faster).
   */
  waitFor(topic: string, signal: AbortSignal): Promise<void> {
    if ((this.topics.get(topic)?.length ?? 0) > 0 || signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let set = this.waiters.get(topic);
      if (!set) this.waiters.set(topic, (set = new Set()));
      const waiters = set;
      const onAbort = (): void => {
        waiters.delete(waiter);
        resolve();
      };
      const waiter: Waiter = {
        wake: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      waiters.add(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Resolves once the backlog is at most `level` (the loader's backpressure). */
  whenBacklogAtMost(level: number): Promise<void> {
    if (this.total <= level) return Promise.resolve();
    return new Promise<void>((resolve) => this.drainListeners.push({ level, resolve }));
  }

  /** Resolves every backlog wait at once (close() must not hang on a full queue). */
  releaseAll(): void {
    const listeners = this.drainListeners;
    this.drainListeners = [];
    for (const listener of listeners) listener.resolve();
  }

  private notifyDrain(): void {
    const ready = this.drainListeners.filter((l) => this.total <= l.level);
    if (ready.length === 0) return;
    this.drainListeners = this.drainListeners.filter((l) => this.total > l.level);
    for (const listener of ready) listener.resolve();
  }
}
