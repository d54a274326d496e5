/**
 * The kept-task release loop: tasks reserved for this process's consumers (by a promotion
 * for a consumer that was asking, or a reserve call's surplus) wait in `KeptTasks` for the
 * next consumer call of their topic; those no consumer took within KEEP_MS go back to the
 * head of their topic's ready lists (release.lua), the attempt not counted, for consumers of
 * any process. One timer per topic, armed for when its oldest kept task has waited KEEP_MS.
 * `stop()` gives back everything kept (a clean close loses no delivery to a ttr).
 */
import type { RankedShards } from './ranked-shards.js';
import type { RefusedNotices } from './refused-notices.js';
import type { Clock, Logger, TimerToken } from '../../core/ports/index.js';
import type { TaskRecord } from '../../core/task/model.js';
import { releaseScript } from './dispatch-commands.js';
import type { RedisClient } from './connection.js';
import { KeptTasks } from '../../coordination/kept-tasks.js';
import type { Keyspace } from './keys.js';
import type { ReadyWaiters } from '../../coordination/ready-waiters.js';
import { groupByShard } from '../../coordination/router.js';

/** Kept tasks nobody took within this long go back to the shared lists (a pull consumer may not come back soon; ADR 0009). */
export const KEEP_MS = 100;

export class KeptTaskReleaser {
  private readonly kept = new KeptTasks();
  private readonly timers = new Map<string, TimerToken>();
  private stopped = false;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keyspace,
    private readonly clock: Clock,
    /** This process's id, in the wakeup message of a release. */
    private readonly owner: string,
    private readonly waiters: ReadyWaiters,
    private readonly logger: Logger,
    private readonly ranked: RankedShards,
    private readonly notices: RefusedNotices,
  ) {}

  size(topic: string): number {
    return this.kept.size(topic);
  }

  /** Up to `max` of the oldest kept tasks of `topic`, handed to a consumer. */
  handOut(topic: string, max: number): TaskRecord[] {
    return this.kept.handOut(topic, max);
  }

  /** Keeps reserved tasks for the next consumer of `topic` in this process, for KEEP_MS at most each. */
  keep(topic: string, records: readonly TaskRecord[]): void {
    this.kept.add(topic, records, this.clock.now());
    this.arm(topic);
  }

  /** As `keep`, ahead of those kept already (they fell due earlier: a background reserve's backlog). */
  keepFirst(topic: string, records: readonly TaskRecord[]): void {
    this.kept.addFirst(topic, records, this.clock.now());
    this.arm(topic);
  }

  /** As `keepFirst` for a topic with priorities: ahead of the kept ones of their priority and lower, behind higher ones (ADR 0057). */
  keepByPriority(topic: string, records: readonly TaskRecord[]): void {
    this.kept.addByPriority(topic, records, this.clock.now());
    this.arm(topic);
  }

  /** Gives back everything kept, and arms no more timers. */
  async stop(): Promise<void> {
    await Promise.all(this.kept.topics().map((topic) => this.release(topic, Infinity))).catch(() => undefined);
    this.stopped = true;
    for (const timer of this.timers.values()) this.clock.clearTimer(timer);
    this.timers.clear();
  }

  /** A timer for when the oldest kept task of `topic` has been kept KEEP_MS. */
  private arm(topic: string): void {
    const oldest = this.kept.oldestAt(topic);
    if (oldest === undefined || this.timers.has(topic) || this.stopped) return;
    const timer = this.clock.setTimer(
      () => {
        this.timers.delete(topic);
        // On failure they stay reserved: their ttr runs out and the recoverer redelivers them.
        this.release(topic, this.clock.now() - KEEP_MS).catch((error: unknown) =>
          this.logger.warn({ err: error, topic }, 'redis: returning kept tasks failed; they are delivered again after their ttr'),
        );
        this.arm(topic);
      },
      Math.max(0, oldest + KEEP_MS - this.clock.now()),
    );
    this.timers.set(topic, timer);
  }

  /** Kept tasks no consumer took (kept at or before `cutoff`): back to the head of the lists, the attempt not counted. */
  private async release(topic: string, cutoff: number): Promise<void> {
    const records = this.kept.handBackKeptBy(topic, cutoff);
    if (this.kept.size(topic) === 0) {
      const timer = this.timers.get(topic);
      if (timer !== undefined) this.clock.clearTimer(timer);
      this.timers.delete(topic);
    }
    if (records.length === 0) return;
    const now = this.clock.now();
    await Promise.all(
      [...groupByShard(records, (r) => r.id, this.keys.shards.length)].map(([shard, group]) => {
        // Tasks above priority 0 go back to the shard's ranked set: every process learns it (ADR 0057).
        const above = group.some((r) => (r.priority ?? 0) > 0);
        return releaseScript(
          this.client,
          this.keys.shards[shard]!,
          topic,
          now,
          this.keys.readyChannel(topic),
          above ? `${shard} ${this.owner} r` : `${shard} ${this.owner}`,
          group.flatMap((r) => (r.receipt === null ? [] : [{ id: r.id, receipt: r.receipt }])),
        ).then(({ noticeRefused }) => {
          if (noticeRefused) this.notices.refused('release');
          if (above) this.ranked.set(topic, shard, true);
          this.waiters.notify(topic, shard);
        });
      }),
    );
  }
}
