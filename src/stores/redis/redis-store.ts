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
 * This class is the port's face: the data operations are parts by role (task-ops.ts,
 * task-inspection.ts, due-histogram.ts, push-subscriptions.ts, recurring-schedules.ts), and
 * the background loops parts of their own, built complete by openRedisStore (index.ts) and
 * stopped here in reverse: shard leases
 * (lease-keeper.ts), promotion (promoter.ts), consumers' reserve calls (ready-reserver.ts),
 * the kept-task release (kept-releaser.ts), the timers channel and shard takeover
 * (coordination/remote-timers.ts over timer-backend.ts) and the recoverer (overdue-recoverer.ts).
 */
import { EVENT_LOG_RETAIN } from '../../core/events.js';
import { RedisEventLog } from './event-log.js';
import { DelayQError } from '../../core/errors.js';
import type { QuarantineRequest, RemoteTimerSource, StoreAckOutcome, TopicPurgeRequest, TopicPurgeStep, AckRequest, StoreCancelOutcome, DeferOutcome, DeferRequest, DueCursor, NackOutcome, ListFilter, Logger, RescheduleOutcome, RetryDeadOutcome, ScheduleOutcome, SharedDispatch, SchedulePlanning, StoreStats, TaskRoles, TaskStore, PushSubscriptionStore, RecurringScheduleStore, TopicStore, DueHistogram, DueHistogramQuery, CancelDeadOutcome, ExpireOutcome, ExtendOutcome, ExtendRequest, NackRequest } from '../../core/ports/index.js';
import type { NewTaskRecord, ReservedTask, TaskRecord, TimerRef } from '../../core/task/model.js';
import { StoredRecordReader } from '../decode-or-warn.js';
import type { RedisClient } from './connection.js';
import { RedisDueHistogram } from './due-histogram.js';
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
import { RedisTaskInspection } from './task-inspection.js';
import { RedisTaskOps } from './task-ops.js';
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

export class RedisStore implements TaskStore, TaskRoles, SharedDispatch {
  readonly description: string;
  readonly horizonMs: number;
  /** Several processes share a Redis namespace: this store coordinates them itself. */
  readonly tasks: TaskRoles = this;
  readonly coordination: SharedDispatch = this;
  /** Schedules are planned by the owner of their shard (src/coordination/schedule-owners.ts). */
  readonly schedulePlanning: SchedulePlanning;
  readonly transactional = null;
  /** The lifecycle events of every process on the namespace: a capped stream (event-log.ts). */
  readonly eventLog: RedisEventLog;
  private readonly client: RedisClient;
  private closed = false;
  private closing: Promise<void> | null = null;
  private readonly ops: RedisTaskOps;
  private readonly inspection: RedisTaskInspection;
  private readonly histogram: RedisDueHistogram;
  readonly push: PushSubscriptionStore;
  readonly schedules: RecurringScheduleStore;
  readonly topics: TopicStore;

  constructor(private readonly parts: RedisStoreParts) {
    const { client, keys } = parts;
    this.client = client;
    this.description = parts.description;
    this.horizonMs = parts.horizonMs;
    this.ops = new RedisTaskOps(parts, this);
    const reader = new StoredRecordReader(this.description, parts.logger);
    this.inspection = new RedisTaskInspection(client, keys);
    this.histogram = new RedisDueHistogram(client, keys);
    const roles = storedRecordRoles({
      push: new RedisPushSubscriptions(client, keys.push, reader),
      schedules: new RedisSchedules(client, keys, reader),
      topicPauses: new RedisTopicPauses(client, keys),
      topicLimits: new RedisTopicLimits(client, keys),
      flowState: new RedisFlowState(client, keys),
      reservedLeases: (topic, now, until) => this.ops.reservedLeases(topic, now, until),
      assertOpen: () => this.assertOpen(),
    });
    this.push = roles.push;
    this.schedules = roles.schedules;
    this.topics = roles.topics;
    this.eventLog = new RedisEventLog(client, keys, EVENT_LOG_RETAIN);
    this.schedulePlanning = parts.planning;
  }

  // ---------------------------------------------------------------------------------
  // Producers, timers and consumers: scripts on the shards (task-ops.ts)

  async schedule(tasks: readonly NewTaskRecord[], now: number): Promise<ScheduleOutcome[]> {
    this.assertOpen();
    return this.ops.schedule(tasks, now);
  }

  async cancel(id: string, now: number): Promise<StoreCancelOutcome> {
    this.assertOpen();
    return this.ops.cancel(id, now);
  }

  async cancelMany(ids: readonly string[], now: number): Promise<StoreCancelOutcome[]> {
    this.assertOpen();
    return this.ops.cancelMany(ids, now);
  }

  async reschedule(id: string, runAt: number, now: number): Promise<RescheduleOutcome> {
    this.assertOpen();
    return this.ops.reschedule(id, runAt, now);
  }

  async loadDue(until: number, after: DueCursor | null, limit: number): Promise<TimerRef[]> {
    this.assertOpen();
    return this.ops.loadDue(until, after, limit);
  }

  /** The engine reserves through reserveReady with this store; by ref is by id here. */
  reserveRefs(refs: readonly TimerRef[], now: number, ttrMs?: number): Promise<ReservedTask[]> {
    return this.ops.reserveRefs(refs, now, ttrMs);
  }

  async reserve(ids: readonly string[], now: number, ttrMs?: number): Promise<TaskRecord[]> {
    this.assertOpen();
    return this.ops.reserve(ids, now, ttrMs);
  }

  async ack(id: string, receipt: string, now: number): Promise<StoreAckOutcome> {
    this.assertOpen();
    return this.ops.ack(id, receipt, now);
  }

  async ackMany(acks: readonly AckRequest[], now: number): Promise<StoreAckOutcome[]> {
    this.assertOpen();
    return this.ops.ackMany(acks, now);
  }

  async nack(request: NackRequest): Promise<NackOutcome> {
    this.assertOpen();
    return this.ops.nack(request);
  }

  async expire(id: string, receipt: string, now: number): Promise<ExpireOutcome> {
    this.assertOpen();
    return this.ops.expire(id, receipt, now);
  }

  async extend(requests: readonly ExtendRequest[], now: number): Promise<ExtendOutcome[]> {
    this.assertOpen();
    return this.ops.extend(requests, now);
  }

  async defer(request: DeferRequest): Promise<DeferOutcome> {
    this.assertOpen();
    return this.ops.defer(request);
  }

  async quarantine(tasks: readonly QuarantineRequest[], now: number): Promise<void> {
    this.assertOpen();
    return this.ops.quarantine(tasks, now);
  }

  async cancelDead(id: string, now: number): Promise<CancelDeadOutcome> {
    this.assertOpen();
    return this.ops.cancelDead(id, now);
  }

  async retryDead(id: string, runAt: number, now: number): Promise<RetryDeadOutcome> {
    this.assertOpen();
    return this.ops.retryDead(id, runAt, now);
  }

  async purge(before: number, limit: number): Promise<number> {
    this.assertOpen();
    return this.ops.purge(before, limit);
  }

  async purgeTopic(request: TopicPurgeRequest): Promise<TopicPurgeStep> {
    this.assertOpen();
    return this.ops.purgeTopic(request);
  }

  // ---------------------------------------------------------------------------------
  // Inspection (task-inspection.ts, due-histogram.ts)

  async get(id: string): Promise<TaskRecord | null> {
    this.assertOpen();
    return this.inspection.get(id);
  }

  async list(filter: ListFilter): Promise<TaskRecord[]> {
    this.assertOpen();
    return this.inspection.list(filter);
  }

  async stats(): Promise<StoreStats> {
    this.assertOpen();
    const stats = await this.inspection.stats();
    const unavailable = this.parts.health.unavailable();
    return unavailable.length === 0 ? stats : { ...stats, unavailable: unavailable.map(({ shard, since, error }) => ({ partition: shard, since, error })) };
  }

  async dueHistogram(query: DueHistogramQuery): Promise<DueHistogram> {
    this.assertOpen();
    return this.histogram.histogram(query);
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

