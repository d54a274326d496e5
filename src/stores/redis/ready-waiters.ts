/**
 * Consumers of one process waiting for ready tasks, per topic, and which shards may have
 * some. A PUBLISH from promote.lua (any process) or a local promote flags the shard and
 * wakes the waiters; they then run take.lua on the flagged shards only. A sweep (every
 * `sweepMs` while someone waits) flags every shard: the safety net for a pub/sub message
 * lost in a reconnect, not the delivery path.
 */
interface TopicState {
  /** Shards that may hold ready ids of the topic. */
  readonly flagged: Set<number>;
  readonly waiters: Set<() => void>;
  /** Per shard, the epoch of its last notification (see `update`). */
  readonly notified: Map<number, number>;
  epoch: number;
}

export class ReadyWaiters {
  private readonly topics = new Map<string, TopicState>();

  constructor(
    private readonly shardCount: number,
    private readonly sweepMs: number,
  ) {}

  private state(topic: string): TopicState {
    let state = this.topics.get(topic);
    if (!state) {
      // Nothing known yet: every shard may hold ready ids.
      state = { flagged: new Set(Array.from({ length: this.shardCount }, (_, i) => i)), waiters: new Set(), notified: new Map(), epoch: 0 };
      this.topics.set(topic, state);
    }
    return state;
  }

  /** Shards worth trying for `topic`, flagged first-come. */
  candidates(topic: string): number[] {
    return [...this.state(topic).flagged];
  }

  /** Read before sending takes, and passed back to `update` with their results. */
  epoch(topic: string): number {
    return this.state(topic).epoch;
  }

  /**
   * After a take sent at `epoch`: whether the shard's list still holds ids. A notification
   * that arrived while the take was in flight keeps the shard flagged, even if the take saw
   * an empty list: the ids it announced may have been pushed after the take ran.
   */
  update(topic: string, shard: number, nonEmpty: boolean, epoch: number): void {
    const state = this.state(topic);
    if (nonEmpty || (state.notified.get(shard) ?? -1) >= epoch) state.flagged.add(shard);
    else state.flagged.delete(shard);
  }

  /** Tasks of `topic` became ready on `shard`. */
  notify(topic: string, shard: number): void {
    const state = this.state(topic);
    state.notified.set(shard, state.epoch++);
    state.flagged.add(shard);
    this.wakeAll(state);
  }

  /** Every shard of every topic may hold ids (a resubscribe after a reconnect). */
  flagAll(): void {
    for (const state of this.topics.values()) {
      for (let i = 0; i < this.shardCount; i++) state.flagged.add(i);
      this.wakeAll(state);
    }
  }

  /** Resolves on a notify, after `retryInMs` (or the sweep), or when `signal` aborts. */
  wait(topic: string, signal: AbortSignal, retryInMs?: number): Promise<void> {
    const state = this.state(topic);
    if (signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        state.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(() => {
        if (retryInMs === undefined) for (let i = 0; i < this.shardCount; i++) state.flagged.add(i);
        done();
      }, retryInMs ?? this.sweepMs);
      state.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Wakes the waiters of `topic` without flagging a shard (tasks were handed over locally). */
  wake(topic: string): void {
    this.wakeAll(this.state(topic));
  }

  wakeAllTopics(): void {
    for (const state of this.topics.values()) this.wakeAll(state);
  }

  private wakeAll(state: TopicState): void {
    for (const wake of [...state.waiters]) wake();
  }
}
