/**
 * Consumers of one process waiting for ready tasks, per topic, and which shards may have
 * some. A PUBLISH from promote.lua (any process) or a local promote flags the shard and
 * wakes the waiters; they then run reserve-ready.lua on the flagged shards only. A sweep
 * (every `sweepMs` while someone waits) flags every shard: the safety net for a pub/sub
 * message lost (in a reconnect, a PUBLISH that failed), not the delivery path.
 */
import type { Clock } from '../core/ports/index.js';

interface TopicState {
  /** Shards that may hold ready ids of the topic. */
  readonly flagged: Set<number>;
  readonly waiters: Set<() => void>;
  /** Per shard, the epoch of its last notification (see `update`). */
  readonly notified: Map<number, number>;
  /**
   * Per flagged shard, how many ids its list holds as far as this process knows: what the
   * last reserve call left there plus what local promotes pushed since. Absent when unknown
   * (a PUBLISH from another process, the sweep, a call that raced a notification).
   */
  readonly backlog: Map<number, number>;
  epoch: number;
  /** When every shard was last flagged (the sweep, a reconnect, the state's creation). */
  sweptAt: number;
}

export class ReadyWaiters {
  private readonly topics = new Map<string, TopicState>();
  private closed = false;

  constructor(
    private readonly shardCount: number,
    private sweepMs: number,
    private readonly clock: Clock,
  ) {}

  /** Sweeps from now on every `ms` (a store that learnt its notifications do not arrive polls instead). Waits already started keep theirs. */
  setSweepMs(ms: number): void {
    this.sweepMs = ms;
  }

  private state(topic: string): TopicState {
    let state = this.topics.get(topic);
    if (!state) {
      // Nothing known yet: every shard may hold ready ids.
      state = { flagged: new Set(Array.from({ length: this.shardCount }, (_, i) => i)), waiters: new Set(), notified: new Map(), backlog: new Map(), epoch: 0, sweptAt: this.clock.now() };
      this.topics.set(topic, state);
    }
    return state;
  }

  /** Shards worth trying for `topic`, flagged first-come. */
  candidates(topic: string): number[] {
    return [...this.state(topic).flagged];
  }

  /** How many ready ids `shard` holds for `topic`, if known (see TopicState.backlog). */
  backlog(topic: string, shard: number): number | undefined {
    return this.state(topic).backlog.get(shard);
  }

  /** Read before sending reserve calls, and passed back to `update` with their results. */
  epoch(topic: string): number {
    return this.state(topic).epoch;
  }

  /**
   * After a reserve call sent at `epoch`: whether the shard's list still holds ids. A
   * notification that arrived while the call was in flight keeps the shard flagged, even if
   * the call saw an empty list: the ids it announced may have been pushed after it ran.
   */
  update(topic: string, shard: number, remaining: number, epoch: number): void {
    const state = this.state(topic);
    const raced = (state.notified.get(shard) ?? -1) >= epoch;
    if (remaining > 0 || raced) state.flagged.add(shard);
    else state.flagged.delete(shard);
    if (raced || remaining === 0) state.backlog.delete(shard);
    else state.backlog.set(shard, remaining);
  }

  /**
   * Tasks of `topic` became ready on `shard`: `count` of them, if the caller knows. A topic
   * nobody here has asked for is left alone (its first call finds every shard flagged), so a
   * flood of messages naming made-up topics keeps no state.
   */
  notify(topic: string, shard: number, count?: number): void {
    const state = this.topics.get(topic);
    if (state === undefined) return;
    state.notified.set(shard, state.epoch++);
    const known = state.flagged.has(shard) ? state.backlog.get(shard) : 0;
    if (count === undefined || known === undefined) state.backlog.delete(shard);
    else state.backlog.set(shard, known + count);
    state.flagged.add(shard);
    this.wakeAll(state);
  }

  /**
   * Flags every shard of `topic` if its sweep is due: at the start of a reserve call, for
   * consumers that never wait (waitMs 0), whose calls never reach `wait` and its sweep.
   */
  sweepIfDue(topic: string): void {
    const state = this.state(topic);
    if (this.clock.now() >= state.sweptAt + this.sweepMs) this.sweep(state);
  }

  /** `shard` may hold ids of every topic (it takes writes again after a spell of failing them). */
  flagShard(shard: number): void {
    for (const state of this.topics.values()) {
      state.flagged.add(shard);
      state.backlog.delete(shard);
      this.wakeAll(state);
    }
  }

  /** Every shard of every topic may hold ids (a resubscribe after a reconnect). */
  flagAll(): void {
    for (const state of this.topics.values()) {
      this.sweep(state);
      this.wakeAll(state);
    }
  }

  /**
   * Resolves on a notify, after `retryInMs` or at the topic's next sweep (whichever comes
   * first), or when `signal` aborts; at once once closed. The sweep is due `sweepMs` after
   * the topic's last one, not after this call began: consumers that poll with waits shorter
   * than `sweepMs` (reserve with waitMs 500, one call after the other) restarted a per-call
   * timer each time and never swept, so a task whose ready notice was lost stayed in its
   * list for as long as they polled.
   */
  wait(topic: string, signal: AbortSignal, retryInMs?: number): Promise<void> {
    const state = this.state(topic);
    if (signal.aborted || this.closed) return Promise.resolve();
    const untilSweep = Math.max(0, state.sweptAt + this.sweepMs - this.clock.now());
    return new Promise<void>((resolve) => {
      const done = (): void => {
        this.clock.clearTimer(timer);
        signal.removeEventListener('abort', done);
        state.waiters.delete(done);
        resolve();
      };
      const timer = this.clock.setTimer(() => {
        if (this.clock.now() >= state.sweptAt + this.sweepMs) this.sweep(state);
        done();
      }, Math.min(retryInMs ?? untilSweep, untilSweep));
      state.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Wakes the waiters of `topic` without flagging a shard (tasks were handed over locally). */
  wake(topic: string): void {
    this.wakeAll(this.state(topic));
  }

  /** Wakes every waiter and lets no call wait again (the store is closing). */
  close(): void {
    this.closed = true;
    for (const state of this.topics.values()) this.wakeAll(state);
  }

  /** Every shard of the topic may hold ids. */
  private sweep(state: TopicState): void {
    for (let i = 0; i < this.shardCount; i++) state.flagged.add(i);
    state.backlog.clear();
    state.sweptAt = this.clock.now();
  }

  private wakeAll(state: TopicState): void {
    for (const wake of [...state.waiters]) wake();
  }
}
