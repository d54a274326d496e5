/**
 * The Redis store's tasks role (`store.tasks`): each call checks the store is open and goes
 * to its part, the scripts on the shards (task-ops.ts) or the reads (task-inspection.ts,
 * due-histogram.ts). The store (redis-store.ts) holds it with the other roles, and closes.
 */
import type { QuarantineRequest, StoreAckOutcome, TopicPurgeRequest, TopicPurgeStep, AckRequest, StoreCancelOutcome, DeferOutcome, DeferRequest, DueCursor, NackOutcome, ListFilter, RescheduleOutcome, RetryDeadOutcome, ScheduleOutcome, StoreStats, TaskRoles, DueHistogram, DueHistogramQuery, CancelDeadOutcome, ExpireOutcome, ExtendOutcome, ExtendRequest, FlowLease, NackRequest } from '../../core/ports/index.js';
import type { NewTaskRecord, ReservedTask, TaskRecord, TimerRef } from '../../core/task/model.js';
import { RedisDueHistogram } from './due-histogram.js';
import type { RedisStoreParts } from './redis-store.js';
import { RedisTaskInspection } from './task-inspection.js';
import { RedisTaskOps } from './task-ops.js';

export class RedisTasks implements TaskRoles {
  private readonly ops: RedisTaskOps;
  private readonly inspection: RedisTaskInspection;
  private readonly histogram: RedisDueHistogram;

  /** `assertOpen`: the store's, which throws QUEUE_CLOSED once it is closed. */
  constructor(
    private readonly parts: RedisStoreParts,
    private readonly assertOpen: () => void,
  ) {
    this.ops = new RedisTaskOps(parts, this);
    this.inspection = new RedisTaskInspection(parts.client, parts.keys);
    this.histogram = new RedisDueHistogram(parts.client, parts.keys);
  }

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

  /** The reservations of a topic in force: TopicLimitStore.reservedLeases, through the store's topics role. */
  reservedLeases(topic: string, now: number, until: number): Promise<FlowLease[]> {
    return this.ops.reservedLeases(topic, now, until);
  }
}
