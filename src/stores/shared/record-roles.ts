/**
 * The push-subscription, recurring-schedule and topic roles of the store port
 * (`store.push`: PushSubscriptionStore, `store.schedules`: RecurringScheduleStore,
 * `store.topics`: TopicPauseStore and TopicLimitStore), written once for every store: each
 * store keeps its records in five parts of its own (Maps, SQLite rows, Redis keys,
 * PostgreSQL rows) with the small interfaces below and builds the three role objects from
 * them (storedRecordRoles), which check the store is open and hand each call to its part.
 * The port's single-record calls are the batch calls of one.
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
  TopicStore,
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

/** What a store hands storedRecordRoles: its parts, its own reservation read, and its open-check. */
export interface RecordParts {
  readonly push: PushSubscriptionPart;
  readonly schedules: SchedulePart;
  readonly topicPauses: TopicPausePart;
  readonly topicLimits: TopicLimitPart;
  readonly flowState: FlowStatePart;
  /** A task read, each store's own (the reservations of a topic in force): TopicLimitStore.reservedLeases. */
  reservedLeases(topic: string, now: number, until: number): Answer<FlowLease[]>;
  /** Throws QUEUE_CLOSED once the store is closed. */
  assertOpen(): void;
}

/** The role objects a store sets as its `push`, `schedules` and `topics`. */
export interface RecordRoles {
  readonly push: PushSubscriptionStore;
  readonly schedules: RecurringScheduleStore;
  readonly topics: TopicStore;
}

export function storedRecordRoles(parts: RecordParts): RecordRoles {
  return { push: new StoredPushSubscriptions(parts), schedules: new StoredSchedules(parts), topics: new StoredTopics(parts) };
}

class StoredPushSubscriptions implements PushSubscriptionStore {
  constructor(private readonly parts: RecordParts) {}

  async putPushSubscription(subscription: PushSubscription): Promise<void> {
    this.parts.assertOpen();
    await this.parts.push.put(subscription);
  }

  async getPushSubscription(topic: string): Promise<PushSubscription | null> {
    this.parts.assertOpen();
    return this.parts.push.get(topic);
  }

  async listPushSubscriptions(): Promise<PushSubscription[]> {
    this.parts.assertOpen();
    return this.parts.push.list();
  }

  async deletePushSubscription(topic: string): Promise<boolean> {
    this.parts.assertOpen();
    return this.parts.push.delete(topic);
  }
}

class StoredSchedules implements RecurringScheduleStore {
  constructor(private readonly parts: RecordParts) {}

  async putSchedule(record: RecurringScheduleRecord): Promise<void> {
    await this.putSchedules([record]);
  }

  async putSchedules(records: readonly RecurringScheduleRecord[]): Promise<void> {
    this.parts.assertOpen();
    if (records.length > 0) await this.parts.schedules.putAll(records);
  }

  async putNewSchedules(records: readonly RecurringScheduleRecord[]): Promise<(RecurringScheduleRecord | null)[]> {
    this.parts.assertOpen();
    return records.length === 0 ? [] : this.parts.schedules.putNew(records);
  }

  async getSchedule(id: string): Promise<RecurringScheduleRecord | null> {
    const [schedule] = await this.getSchedules([id]);
    return schedule ?? null;
  }

  async getSchedules(ids: readonly string[]): Promise<(RecurringScheduleRecord | null)[]> {
    this.parts.assertOpen();
    return ids.length === 0 ? [] : this.parts.schedules.get(ids);
  }

  async listSchedules(): Promise<RecurringScheduleRecord[]> {
    this.parts.assertOpen();
    return this.parts.schedules.list();
  }

  async deleteSchedule(id: string): Promise<boolean> {
    this.parts.assertOpen();
    return this.parts.schedules.delete(id);
  }

  async swapSchedule(expected: RecurringScheduleRecord, next: RecurringScheduleRecord): Promise<boolean> {
    const [swapped] = await this.swapSchedules([{ expected, next }]);
    return swapped === true;
  }

  async swapSchedules(swaps: readonly RecurringScheduleSwap[]): Promise<boolean[]> {
    this.parts.assertOpen();
    return swaps.length === 0 ? [] : this.parts.schedules.swapAll(swaps);
  }

  async schedulesVersion(): Promise<string> {
    this.parts.assertOpen();
    return this.parts.schedules.versionToken();
  }
}

class StoredTopics implements TopicStore {
  constructor(private readonly parts: RecordParts) {}

  async setTopicPaused(topic: string, paused: boolean): Promise<boolean> {
    this.parts.assertOpen();
    return this.parts.topicPauses.set(topic, paused);
  }

  async pausedTopics(): Promise<PausedTopics> {
    this.parts.assertOpen();
    return this.parts.topicPauses.read();
  }

  async setTopicLimits(topic: string, limits: TopicLimits | null): Promise<boolean> {
    this.parts.assertOpen();
    return this.parts.topicLimits.set(topic, limits);
  }

  async topicLimits(): Promise<LimitedTopics> {
    this.parts.assertOpen();
    return this.parts.topicLimits.read();
  }

  async admitFlow(request: FlowAdmissionRequest): Promise<FlowAdmission> {
    this.parts.assertOpen();
    return this.parts.flowState.admit(request);
  }

  async bindFlow(binding: FlowBinding): Promise<void> {
    this.parts.assertOpen();
    await this.parts.flowState.bind(binding);
  }

  async releaseFlow(topic: string, ids: readonly string[]): Promise<void> {
    this.parts.assertOpen();
    if (ids.length > 0) await this.parts.flowState.release(topic, ids);
  }

  async holdFlow(topic: string, leases: readonly FlowLease[], now: number): Promise<void> {
    this.parts.assertOpen();
    if (leases.length > 0) await this.parts.flowState.hold(topic, leases, now);
  }

  async reservedLeases(topic: string, now: number, until: number): Promise<FlowLease[]> {
    this.parts.assertOpen();
    return this.parts.reservedLeases(topic, now, until);
  }
}
