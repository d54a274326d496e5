/**
 * The per-(topic, state) counters that `stats` reports, as one model every store applies:
 * a task's change of state is a list of counter deltas, and a batch of changes is the sum
 * of its lists. A task that comes into being has no state before (`null`); a purged task has
 * none after.
 *
 *   create, topic "mail"        null      -> pending     [pending +1]
 *   reserve                     pending   -> reserved    [pending -1, reserved +1]
 *   reschedule                  pending   -> pending     []
 *   purge                       completed -> null        [completed -1]
 *
 * Counters are kept with the writes, never counted over the tasks, so stats costs a read of
 * a few counters however many tasks there are; what keeps them exact is that each store
 * moves them by these deltas in the transaction that changes the state. The memory and
 * SQLite stores apply them from here; the Redis scripts spell them in Lua (`leave` and
 * `save` in lua/includes/codec.lua), and a property test holds all three to this model.
 */
import { dict } from '../dict.js';
import type { StoreStats } from '../ports/tasks.js';
import { TASK_STATES, type TaskState } from './model.js';

/** No state: the task does not exist on that side of the change. */
export type StateOrNone = TaskState | null;

/** One counter's change, without its topic (the topic is the task's). */
export interface StateDelta {
  readonly state: TaskState;
  readonly n: number;
}

export interface CounterDelta extends StateDelta {
  readonly topic: string;
}

const EMPTY: readonly StateDelta[] = Object.freeze([]);
type Side = TaskState | 'none';
/** Every (from, to) pair's deltas, built once: the memory store applies them on every delivery. */
const TABLE = {} as Record<Side, Record<Side, readonly StateDelta[]>>;
for (const from of [...TASK_STATES, 'none'] as const) {
  TABLE[from] = {} as Record<Side, readonly StateDelta[]>;
  for (const to of [...TASK_STATES, 'none'] as const) {
    const deltas: StateDelta[] = [];
    if (from !== to && from !== 'none') deltas.push(Object.freeze({ state: from, n: -1 }));
    if (from !== to && to !== 'none') deltas.push(Object.freeze({ state: to, n: +1 }));
    TABLE[from][to] = deltas.length === 0 ? EMPTY : Object.freeze(deltas);
  }
}

/** The counter deltas of one task moving from `from` to `to` (shared and frozen). */
export function stateDeltas(from: StateOrNone, to: StateOrNone): readonly StateDelta[] {
  return TABLE[from ?? 'none'][to ?? 'none'];
}

/** The same deltas, each with the task's topic. */
export function counterDeltas(topic: string, from: StateOrNone, to: StateOrNone): CounterDelta[] {
  return stateDeltas(from, to).map(({ state, n }) => ({ topic, state, n }));
}

/**
 * Applies a change of `times` tasks of one topic to that topic's counters, in place: the
 * deltas of stateDeltas, spelled out without a lookup (the memory store calls it on every
 * move of every task; test/core/counter-deltas.test.ts holds the two spellings together).
 */
export function applyStateDeltas(counts: Record<TaskState, number>, from: StateOrNone, to: StateOrNone, times = 1): void {
  if (from === to) return;
  if (from !== null) counts[from] -= times;
  if (to !== null) counts[to] += times;
}

/**
 * The sum of the deltas of a batch of changes, per (topic, state): what a store writes once
 * per transaction, so a batch of 1,000 creations of one topic costs one counter write.
 */
export class CounterTally {
  private readonly sums = new Map<string, { topic: string; state: TaskState; n: number }>();

  /** `times` tasks of `topic` moved from `from` to `to`. */
  add(topic: string, from: StateOrNone, to: StateOrNone, times = 1): void {
    for (const { state, n } of stateDeltas(from, to)) this.addDelta(topic, state, n * times);
  }

  addDelta(topic: string, state: TaskState, n: number): void {
    const key = `${state}\u0000${topic}`;
    const entry = this.sums.get(key);
    if (entry) entry.n += n;
    else this.sums.set(key, { topic, state, n });
  }

  mergeInto(target: CounterTally): void {
    for (const { topic, state, n } of this.sums.values()) target.addDelta(topic, state, n);
  }

  /** The non-zero sums. */
  *entries(): IterableIterator<CounterDelta> {
    for (const entry of this.sums.values()) if (entry.n !== 0) yield entry;
  }

  /** The sums as `stats` reports counters: per topic, the states with a count other than 0. */
  byTopic(): Record<string, Partial<Record<TaskState, number>>> {
    const out = dict<Partial<Record<TaskState, number>>>();
    for (const { topic, state, n } of this.entries()) (out[topic] ??= {})[state] = n;
    return out;
  }
}

/**
 * `stats` from counters as a store reads them (rows, hash fields; a topic and state may come
 * more than once, from several shards): summed, zeros and unknown states left out.
 */
export function statsOfCounters(counters: Iterable<{ readonly topic: string; readonly state: TaskState | undefined; readonly n: number }>): StoreStats {
  const byState: Record<TaskState, number> = { pending: 0, reserved: 0, completed: 0, dead: 0, cancelled: 0 };
  const byTopic = dict<Partial<Record<TaskState, number>>>();
  for (const { topic, state, n } of counters) {
    if (state === undefined || !TASK_STATES.includes(state) || n === 0) continue;
    byState[state] += n;
    const topicCounts = (byTopic[topic] ??= {});
    topicCounts[state] = (topicCounts[state] ?? 0) + n;
  }
  return { byState, byTopic };
}
