/**
 * The Redis store: the task state machine of src/core/task/lifecycle.ts as one Lua script
 * per operation over N shards of one namespace (keys.ts has the data model), shared by every
 * delayq process that opens the namespace (SharedDispatch).
 *
 * Operations on one task go to the shard of its id (router.ts). Batch operations group by
 * shard and run one script per shard in parallel, so a batch is atomic per shard (a
 * failed call may have created the tasks of some shards; retrying it is safe because
 * schedule is create-if-absent by id). loadDue merges the shards this process owns
 * (due-merge.ts). How the processes share the work:
 *
 *   producer (any process) --schedule--> shard s --PUBLISH timers--> owner of s: wheel
 *   owner's wheel fires ----promote.lua--> ready list (s, topic) --PUBLISH ready--> consumers
 *   consumer (any process) --reserve-ready.lua--> reserved (once, whatever the duplicates)
 *
 * This class is the port's face: the tasks role is redis-tasks.ts (over task-ops.ts,
 * task-inspection.ts, due-histogram.ts), the record roles are built by storedRecordRoles
 * (push-subscriptions.ts, recurring-schedules.ts, topic-pauses.ts, topic-limits.ts), and
 * the background loops parts of their own, built complete by openRedisStore (index.ts) and
 * stopped here in reverse: shard leases
 * (lease-keeper.ts), promotion (promoter.ts), consumers' reserve calls (ready-reserver.ts),
 * the kept-task release (kept-releaser.ts), the timers channel and shard takeover
 * (coordination/remote-timers.ts over timer-backend.ts) and the recoverer (overdue-recoverer.ts).
 */
import { EVENT_LOG_RETAIN } from '../../core/events.js';
import { RedisEventLog } from './event-log.js';
import { DelayQError } from '../../core/errors.js';
import type { RemoteTimerSource, Logger, SharedDispatch, SchedulePlanning, TaskStore, PushSubscriptionStore, RecurringScheduleStore, TopicStore } from '../../core/ports/index.js';
import type { TaskRecord, TimerRef } from '../../core/task/model.js';
import { StoredRecordReader } from '../decode-or-warn.js';
import type { RedisClient } from './connection.js';
import type { KeptTaskReleaser } from './kept-releaser.js';
import type { Keyspace } from './keys.js';
import type { LeaseKeeper } from './lease-keeper.js';
import type { OverdueRecoverer } from './overdue-recoverer.js';
import type { Unparker } from './parking.js';
import type { Promoter } from './promoter.js';
import { RedisPushSubscriptions } from './push-subscriptions.js';
import type { ReadyReserver } from './ready-reserver.js';
import { RedisTopicPauses } from './topic-pauses.js';
import { RedisFlowState, RedisTopicLimits } from './topic-limits.js';
import { RedisSchedules } from './recurring-schedules.js';
import type { RemoteTimers } from '../../coordination/remote-timers.js';
import type { ShardHealth } from '../../coordination/shard-health.js';
import type { ShardProbe } from './shard-probe.js';
import type { ShardLeases } from '../../coordination/shard-leases.js';
import type { Subscriber } from './subscriber.js';
import type { NoticeGuard } from '../../coordination/notices.js';
import { RedisTasks } from './redis-tasks.js';
import { storedRecordRoles } from '../shared/record-roles.js';

/** Everything the store is made of, each part complete (index.ts builds them in order). */
export interface RedisStoreParts {
  readonly client: RedisClient;
  readonly keys: Keyspace;
  readonly description: string;
  readonly horizonMs: number;
  readonly logger: Logger;
  readonly leases: ShardLeases;
  readonly unparker: Unparker;
  readonly subscriber: Subscriber;
  readonly remoteTimers: RemoteTimers;
  /** Messages of other clients dropped as malformed (notices.ts). */
  readonly guard: NoticeGuard;
  readonly recoverer: OverdueRecoverer;
  readonly kept: KeptTaskReleaser;
  readonly promoter: Promoter;
  readonly reserver: ReadyReserver;
  readonly keeper: LeaseKeeper;
  readonly planning: SchedulePlanning;
  /** Which shards cannot take writes now (shard-health.ts), and the write that finds out when they can again. */
  readonly health: ShardHealth;
  readonly probe: ShardProbe;
}

export class RedisStore implements TaskStore, SharedDispatch {
  readonly description: string;
  readonly horizonMs: number;
  readonly tasks: RedisTasks;
  /** Several processes share a Redis namespace: this store coordinates them itself. */
  readonly coordination: SharedDispatch = this;
  /** Schedules are planned by the owner of their shard (src/coordination/schedule-owners.ts). */
  readonly schedulePlanning: SchedulePlanning;
  readonly transactional = null;
  /** The lifecycle events of every process on the namespace: a capped stream (event-log.ts). */
  readonly eventLog: RedisEventLog;
  private readonly client: RedisClient;
  private closed = false;
  private closing: Promise<void> | null = null;
  readonly push: PushSubscriptionStore;
  readonly schedules: RecurringScheduleStore;
  readonly topics: TopicStore;

  constructor(private readonly parts: RedisStoreParts) {
    const { client, keys } = parts;
    this.client = client;
    this.description = parts.description;
    this.horizonMs = parts.horizonMs;
    this.tasks = new RedisTasks(parts, () => this.assertOpen());
    const reader = new StoredRecordReader(this.description, parts.logger);
    const roles = storedRecordRoles({
      push: new RedisPushSubscriptions(client, keys.push, reader),
      schedules: new RedisSchedules(client, keys, reader),
      topicPauses: new RedisTopicPauses(client, keys),
      topicLimits: new RedisTopicLimits(client, keys),
      flowState: new RedisFlowState(client, keys),
      reservedLeases: (topic, now, until) => this.tasks.reservedLeases(topic, now, until),
      assertOpen: () => this.assertOpen(),
    });
    this.push = roles.push;
    this.schedules = roles.schedules;
    this.topics = roles.topics;
    this.eventLog = new RedisEventLog(client, keys, EVENT_LOG_RETAIN);
    this.schedulePlanning = parts.planning;
  }

  // ---------------------------------------------------------------------------------
  // Shared dispatch

  async promote(refs: readonly TimerRef[], now: number): Promise<void> {
    this.assertOpen();
    await this.parts.promoter.promote(refs, now);
  }

  async reserveReady(topic: string, max: number, now: () => number, ttrMs: number | undefined, signal: AbortSignal, exact = false): Promise<TaskRecord[]> {
    this.assertOpen();
    return this.parts.reserver.reserveReady(topic, max, now, ttrMs, signal, exact);
  }

  onRemoteTimer(listener: (ref: TimerRef, source: RemoteTimerSource) => void): void {
    this.parts.remoteTimers.listen(listener);
  }

  badNotices(): ReadonlyMap<string, number> {
    return this.parts.guard.counts();
  }

  // ---------------------------------------------------------------------------------

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** Stops the parts in the reverse of the order index.ts started them. */
  private async shutdown(): Promise<void> {
    const { reserver, kept, recoverer, remoteTimers, keeper, subscriber, unparker, health, probe } = this.parts;
    health.stop();
    await probe.close();
    // Waiting consumer calls return; what background reserves bring in is kept, and what is
    // kept goes back to the ready lists while the connection is up.
    await reserver.stop();
    await kept.stop();
    this.closed = true;
    recoverer.stop();
    remoteTimers.stop();
    await keeper.stop();
    await subscriber.close();
    await unparker.settle();
    await this.client.quit().catch(() => this.client.disconnect());
  }

  private assertOpen(): void {
    if (this.closed) throw new DelayQError('QUEUE_CLOSED', `the redis store (${this.description}) is closed`);
  }


}

