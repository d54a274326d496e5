/**
 * The push-subscription, recurring-schedule, topic-pause and topic-limit roles of the store
 * port (PushSubscriptionStore, RecurringScheduleStore, TopicPauseStore, TopicLimitStore), written once for every
 * store: each store keeps its records in five parts of its own (Maps, SQLite rows, Redis keys, PostgreSQL rows) with the small interfaces below, and its
 * class extends StoredRecordRoles, which checks the store is open and hands each call to
 * its part. The port's single-record calls are the batch calls of one.
 */
import type {
  FlowAdmission,
  FlowAdmissionRequest,
  FlowBinding,
  FlowLease,
  LimitedTopics,
  PausedTopics,
  PushSubscriptionStore,
  RecurringScheduleStore,
  RecurringScheduleSwap,
  TopicLimits,
  TopicLimitStore,
  TopicPauseStore,
} from '../../core/ports/index.js';
import type { PushSubscription } from '../../core/push.js';
import type { RecurringScheduleRecord } from '../../core/schedule/model.js';

/** A part's answer, at once (memory) or later (a driver). */
type Answer<T> = T | Promise<T>;

/** A store's push subscriptions, one per topic, listed in topic order. */
export interface PushSubscriptionPart {
  put(subscription: PushSubscription): Answer<void>;
  get(topic: string): Answer<PushSubscription | null>;
  list(): Answer<PushSubscription[]>;
  delete(topic: string): Answer<boolean>;
}

/** A store's recurring schedules: the RecurringScheduleStore contract, by batch. */
export interface SchedulePart {
  putAll(records: readonly RecurringScheduleRecord[]): Answer<void>;
  putNew(records: readonly RecurringScheduleRecord[]): Answer<(RecurringScheduleRecord | null)[]>;
  get(ids: readonly string[]): Answer<(RecurringScheduleRecord | null)[]>;
  list(): Answer<RecurringScheduleRecord[]>;
  delete(id: string): Answer<boolean>;
  swapAll(swaps: readonly RecurringScheduleSwap[]): Answer<boolean[]>;
  /** schedulesVersion (ADR 0033; shared/schedules-version.ts). */
  versionToken(): Answer<string>;
}

/** A store's paused topics: the TopicPauseStore contract (ADR 0040). */
export interface TopicPausePart {
  /** True if the set changed; the version moves with it, in the same write. */
  set(topic: string, paused: boolean): Answer<boolean>;
  read(): Answer<PausedTopics>;
}

/** A store's topic limits: the limits part of the TopicLimitStore contract (ADR 0043). */
export interface TopicLimitPart {
  /** True if the limits changed; the version moves with them, in the same write. */
  set(topic: string, limits: TopicLimits | null): Answer<boolean>;
  read(): Answer<LimitedTopics>;
}

/** The state the limits govern: buckets and slots (FlowLedger in memory; Redis keys; PostgreSQL rows). */
export interface FlowStatePart {
  admit(request: FlowAdmissionRequest): Answer<FlowAdmission>;
  bind(binding: FlowBinding): Answer<void>;
  release(topic: string, ids: readonly string[]): Answer<void>;
  hold(topic: string, leases: readonly FlowLease[], now: number): Answer<void>;
}

export abstract class StoredRecordRoles implements PushSubscriptionStore, RecurringScheduleStore, TopicPauseStore, TopicLimitStore {
  protected abstract readonly pushSubscriptionPart: PushSubscriptionPart;
  protected abstract readonly schedulePart: SchedulePart;
  protected abstract readonly topicPausePart: TopicPausePart;
  protected abstract readonly topicLimitPart: TopicLimitPart;
  protected abstract readonly flowStatePart: FlowStatePart;
  /** Throws QUEUE_CLOSED once the store is closed. */
  protected abstract assertOpen(): void;

  async putPushSubscription(subscription: PushSubscription): Promise<void> {
    this.assertOpen();
    await this.pushSubscriptionPart.put(subscription);
  }

  async getPushSubscription(topic: string): Promise<PushSubscription | null> {
    this.assertOpen();
    return this.pushSubscriptionPart.get(topic);
  }

  async listPushSubscriptions(): Promise<PushSubscription[]> {
    this.assertOpen();
    return this.pushSubscriptionPart.list();
  }

  async deletePushSubscription(topic: string): Promise<boolean> {
    this.assertOpen();
    return this.pushSubscriptionPart.delete(topic);
  }

  async putSchedule(record: RecurringScheduleRecord): Promise<void> {
    await this.putSchedules([record]);
  }

  async putSchedules(records: readonly RecurringScheduleRecord[]): Promise<void> {
    this.assertOpen();
    if (records.length > 0) await this.schedulePart.putAll(records);
  }

  async putNewSchedules(records: readonly RecurringScheduleRecord[]): Promise<(RecurringScheduleRecord | null)[]> {
    this.assertOpen();
    return records.length === 0 ? [] : this.schedulePart.putNew(records);
  }

  async getSchedule(id: string): Promise<RecurringScheduleRecord | null> {
    const [schedule] = await this.getSchedules([id]);
    return schedule ?? null;
  }

  async getSchedules(ids: readonly string[]): Promise<(RecurringScheduleRecord | null)[]> {
    this.assertOpen();
    return ids.length === 0 ? [] : this.schedulePart.get(ids);
  }

  async listSchedules(): Promise<RecurringScheduleRecord[]> {
    this.assertOpen();
    return this.schedulePart.list();
  }

  async deleteSchedule(id: string): Promise<boolean> {
    this.assertOpen();
    return this.schedulePart.delete(id);
  }

  async swapSchedule(expected: RecurringScheduleRecord, next: RecurringScheduleRecord): Promise<boolean> {
    const [swapped] = await this.swapSchedules([{ expected, next }]);
    return swapped === true;
  }

  async swapSchedules(swaps: readonly RecurringScheduleSwap[]): Promise<boolean[]> {
    this.assertOpen();
    return swaps.length === 0 ? [] : this.schedulePart.swapAll(swaps);
  }

  async schedulesVersion(): Promise<string> {
    this.assertOpen();
    return this.schedulePart.versionToken();
  }

  async setTopicPaused(topic: string, paused: boolean): Promise<boolean> {
    this.assertOpen();
    return this.topicPausePart.set(topic, paused);
  }

  async pausedTopics(): Promise<PausedTopics> {
    this.assertOpen();
    return this.topicPausePart.read();
  }

  async setTopicLimits(topic: string, limits: TopicLimits | null): Promise<boolean> {
    this.assertOpen();
    return this.topicLimitPart.set(topic, limits);
  }

  async topicLimits(): Promise<LimitedTopics> {
    this.assertOpen();
    return this.topicLimitPart.read();
  }

  async admitFlow(request: FlowAdmissionRequest): Promise<FlowAdmission> {
    this.assertOpen();
    return this.flowStatePart.admit(request);
  }

  async bindFlow(binding: FlowBinding): Promise<void> {
    this.assertOpen();
    await this.flowStatePart.bind(binding);
  }

  async releaseFlow(topic: string, ids: readonly string[]): Promise<void> {
    this.assertOpen();
    if (ids.length > 0) await this.flowStatePart.release(topic, ids);
  }

  async holdFlow(topic: string, leases: readonly FlowLease[], now: number): Promise<void> {
    this.assertOpen();
    if (leases.length > 0) await this.flowStatePart.hold(topic, leases, now);
  }

  /** A task read, each store's own (the reservations of a topic in force). */
  abstract reservedLeases(topic: string, now: number, until: number): Promise<FlowLease[]>;
}
