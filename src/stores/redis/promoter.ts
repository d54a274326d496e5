/**
 * Promotion: this process's wheel fired the 'run' timers of shards it owns, and their tasks
 * become available to every process's consumers. One promote.lua call per shard (batched
 * per shard, batcher.ts) checks the lease, reserves at once what this process's consumers
 * are asking for (consumer-demand.ts; kept for them, kept-releaser.ts) and appends the rest
 * to the topics' shared ready lists, with a PUBLISH that wakes consumers elsewhere. Local
 * consumers are woken directly (ready-waiters.ts), without waiting for the PUBLISH.
 */
import type { TimerRef } from '../../core/task/model.js';
import { ShardBatcher } from '../../coordination/batcher.js';
import { decodeTask } from './codec.js';
import { promoteScript } from './dispatch-commands.js';
import { MAX_SCRIPT_BATCH } from './script-runner.js';
import type { ConsumerDemand } from '../../coordination/consumer-demand.js';
import type { RedisClient } from './connection.js';
import type { KeptTaskReleaser } from './kept-releaser.js';
import type { Keyspace } from './keys.js';
import { nextNonce } from '../shared/nonce.js';
import type { ReadyWaiters } from '../../coordination/ready-waiters.js';
import type { RankedShards } from './ranked-shards.js';
import type { RefusedNotices } from './refused-notices.js';
import { groupByShard, shardOf } from '../../coordination/router.js';
import type { ShardHealth } from '../../coordination/shard-health.js';
import { DelayQError, isDelayQError } from '../../core/errors.js';
import { PartialBatchError } from '../../core/partial-batch.js';
import type { ShardLeases } from '../../coordination/shard-leases.js';

interface Promotion {
  readonly ref: TimerRef;
  readonly now: number;
}

export class Promoter {
  private readonly promotions: ShardBatcher<Promotion, void>;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keyspace,
    private readonly leases: ShardLeases,
    private readonly demand: ConsumerDemand,
    private readonly kept: KeptTaskReleaser,
    private readonly waiters: ReadyWaiters,
    private readonly health: ShardHealth,
    private readonly ranked: RankedShards,
    private readonly notices: RefusedNotices,
  ) {
    this.promotions = new ShardBatcher((shard, items) => this.promoteShard(shard, items), MAX_SCRIPT_BATCH);
  }

  /**
   * Promotes each shard's refs on its own: a shard that cannot take writes (marked so, or
   * failing now) holds back only its refs, which the call's PartialBatchError names
   * (undefined outcomes) for the engine to promote again; the other shards' are done.
   */
  async promote(refs: readonly TimerRef[], now: number): Promise<void> {
    const failures: { shard: number; error: DelayQError }[] = [];
    const promotedShards = new Set<number>();
    await Promise.all(
      [...groupByShard(refs, (r) => r.id, this.keys.shards.length)].map(async ([shard, group]) => {
        // Not ours: the owner has these timers and promotes them.
        if (!this.leases.owns(shard)) {
          promotedShards.add(shard);
          return;
        }
        if (!this.health.available(shard)) {
          failures.push({ shard, error: new DelayQError('STORE_UNAVAILABLE', `redis: shard ${shard} cannot take writes now`, { shard }) });
          return;
        }
        try {
          for (let from = 0; from < group.length; from += MAX_SCRIPT_BATCH)
            await this.health.track(shard, () =>
              this.promotions.submit(
                shard,
                group.slice(from, from + MAX_SCRIPT_BATCH).map((ref) => ({ ref, now })),
              ),
            );
          promotedShards.add(shard);
        } catch (error) {
          if (!isDelayQError(error, 'STORE_UNAVAILABLE')) throw error;
          failures.push({ shard, error });
        }
      }),
    );
    if (failures.length === 0) return;
    const shardCount = this.keys.shards.length;
    throw new PartialBatchError(
      refs.map((ref) => (promotedShards.has(shardOf(ref.id, shardCount)) ? true : undefined)),
      failures.map((f) => f.shard).sort((a, b) => a - b),
      failures[0]!.error,
    );
  }

  private async promoteShard(shard: number, items: readonly Promotion[]): Promise<void[]> {
    const value = this.leases.leaseValue(shard);
    const done = items.map(() => undefined);
    if (value === undefined) return done;
    // Each ref was due at its own now, so the latest now of the batch loses none.
    const now = Math.max(...items.map((i) => i.now));
    const refs = items.map((i) => i.ref);
    // Local consumers asking now get due tasks reserved in this same call (timer to
    // consumer in one round trip); the rest go to the shared lists.
    const allotted = new Map<string, number>();
    const reserveFor = (topic: string): number => {
      const free = this.demand.of(topic) - this.kept.size(topic) - this.demand.promised(topic);
      const n = Math.max(0, Math.min(free, refs.length));
      allotted.set(topic, n);
      this.demand.promise(topic, n);
      return n;
    };
    let result: Awaited<ReturnType<typeof promoteScript>>;
    try {
      result = await promoteScript(this.client, this.keys.shards[shard]!, {
        leaseValue: value,
        now,
        entries: refs,
        channelOf: (t) => this.keys.readyChannel(t),
        message: `${shard} ${this.leases.owner}`,
        reserveFor,
        nonce: `${nextNonce()}.`,
      });
    } finally {
      for (const [topic, n] of allotted) this.demand.promise(topic, -n);
    }
    if (!result.owned) {
      this.leases.markLost(shard);
      return done;
    }
    if (result.noticeRefused) this.notices.refused('promote');
    for (const [id, body] of result.reserved) {
      const record = decodeTask(id, body).record;
      this.kept.keep(record.topic, [record]);
      this.waiters.wake(record.topic);
    }
    for (const topic of result.ranked) this.ranked.set(topic, shard, true);
    // Local consumers need not wait for the PUBLISH round trip.
    for (const [topic, n] of result.pushed) this.waiters.notify(topic, shard, n);
    return done;
  }
}
