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
 * This class holds the data operations; the background loops are parts of their own, built
 * complete by openRedisStore (index.ts) and stopped here in reverse: shard leases
 * (lease-keeper.ts), promotion (promoter.ts), consumers' reserve calls (ready-reserver.ts),
 * the kept-task release (kept-releaser.ts), the timers channel and shard takeover
 * (remote-timers.ts) and the recoverer (overdue-recoverer.ts).
 */
import { decodedOrWarn } from '../decode-or-warn.js';
import type { ChainableCommander } from 'ioredis';
import { reserveRefsByIds } from '../../core/batch-fallbacks.js';
import { DelayQError } from '../../core/errors.js';
import type { PushSubscription } from '../../core/push.js';
import type { AckOutcome, AckRequest, CancelOutcome, DeferOutcome, DueCursor, StoreNackOptions, NackOutcome, ListFilter, Logger, RescheduleOutcome, RetryDeadOutcome, ScheduleOutcome, SharedDispatch, SchedulePlanning, StoreStats, TaskStore, DueHistogram, DueHistogramQuery, CancelDeadOutcome } from '../../core/ports/index.js';
import { TASK_STATES, laneOf, type NewTaskRecord, type ReservedTask, type TaskRecord, type TaskState, type TimerRef } from '../../core/task/model.js';
import { byTopic, decodePushSubscription, encodePushSubscription } from '../push-subscription-codec.js';
import { byId, decodeSchedule, decodeSchedules, encodeSchedule } from '../schedule-codec.js';
import type { ScheduleRecord } from '../../core/schedule/model.js';
import { type ScheduleSwap } from '../../core/ports/index.js';
import { inWholeHours, PARKED_COUNT_GRAIN_MS } from '../../core/due-histogram.js';
import { swapChangesDefinition } from '../../core/schedule/swap.js';
import { ShardBatcher } from '../shared/batcher.js';
import { decodeTask, encodeNewTask, stateOfChar } from './codec.js';
import { execAndWait, waitSetting } from './replication.js';
import {
  ackScript,
  cancelDeadScript,
  cancelScript,
  deferScript,
  DUE_READ_CHUNK,
  dueReadDelayedScript,
  dueReadParkedScript,
  expireScript,
  loadDueScript,
  MAX_SCRIPT_BATCH,
  nackScript,
  purgeScript,
  rescheduleScript,
  reserveScript,
  retryDeadScript,
  scheduleScript,
  type DueEntry,
  type MoveReply,
  type ScheduleArgs,
  swapScheduleScript,
  putNewSchedulesScript,
  putSchedulesScript,
  deleteScheduleScript,
} from './commands.js';
import type { RedisClient } from './connection.js';
import { mergeDue } from '../shared/due-merge.js';
import type { KeptTaskReleaser } from './kept-releaser.js';
import type { Keyspace, ShardKeys } from './keys.js';
import type { LeaseKeeper } from './lease-keeper.js';
import { nextNonce } from '../shared/nonce.js';
import type { OverdueRecoverer } from './overdue-recoverer.js';
import { PARK_BUCKET_MS, firstParkBucket, parkBucketOf, type Unparker } from './parking.js';
import type { Promoter } from './promoter.js';
import type { ReadyReserver } from './ready-reserver.js';
import type { RemoteTimers } from './remote-timers.js';
import { groupByShard, shardOf } from '../shared/router.js';
import type { ShardLeases } from '../shared/shard-leases.js';
import type { Subscriber } from './subscriber.js';

const MAX_LOAD_PAGE = 2_000;
/**
 * The most task entries one dueHistogram reads one by one (members of `delayed` for a
 * topic, ids in park lists), over all shards, in due-read.lua calls of DUE_READ_CHUNK.
 * Beyond it the answer says how far it is complete (coveredUntil).
 */
export const HISTOGRAM_READ_CAP = 100_000;
/** Hours of parked counts asked by name per shard (HMGET); more, and the shard's counts are read whole (HGETALL). */
const MAX_HOUR_FIELDS = 20_000;
/** The members of `delayed` and `reserved` are the task's seq in this many bytes, then its id (seqBytes in lua/includes/patch.lua; ADR 0006). */
const SEQ_BYTES = 7;
/** Schedules per HSCAN page of listSchedules: one short reply to parse at a time. */
const SCHEDULE_SCAN_COUNT = 500;

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
  readonly recoverer: OverdueRecoverer;
  readonly kept: KeptTaskReleaser;
  readonly promoter: Promoter;
  readonly reserver: ReadyReserver;
  readonly keeper: LeaseKeeper;
  readonly planning: SchedulePlanning;
}

export class RedisStore implements TaskStore, SharedDispatch {
  readonly description: string;
  readonly horizonMs: number;
  /** Several processes share a Redis namespace: this store coordinates them itself. */
  readonly shared: SharedDispatch = this;
  /** Schedules are planned by the owner of their shard (shared/schedule-owners.ts). */
  readonly schedulePlanning: SchedulePlanning;
  readonly timerHomes = null;
  private readonly client: RedisClient;
  private readonly keys: Keyspace;
  private readonly shardCount: number;
  private closed = false;
  private closing: Promise<void> | null = null;
  private readonly acks: ShardBatcher<{ id: string; receipt: string; now: number }, string>;
  private readonly cancels: ShardBatcher<{ id: string; now: number }, CancelOutcome>;

  constructor(private readonly parts: RedisStoreParts) {
    this.client = parts.client;
    this.keys = parts.keys;
    this.description = parts.description;
    this.horizonMs = parts.horizonMs;
    this.shardCount = parts.keys.shards.length;
    this.schedulePlanning = parts.planning;
    // A batch runs at the latest `now` of its items: each caller's now is a lower bound
    // of the time of the change, and updatedAt only orders purges.
    this.acks = new ShardBatcher(
      (shard, items) => ackScript(this.client, this.shard(shard), Math.max(...items.map((i) => i.now)), items),
      MAX_SCRIPT_BATCH,
    );
    this.cancels = new ShardBatcher(
      (shard, items) => cancelScript(this.client, this.shard(shard), Math.max(...items.map((i) => i.now)), items.map((i) => i.id)),
      MAX_SCRIPT_BATCH,
    );
  }

  // ---------------------------------------------------------------------------------
  // Producers

  async schedule(tasks: readonly NewTaskRecord[], now: number): Promise<ScheduleOutcome[]> {
    this.assertOpen();
    if (tasks.length === 0) return [];
    // One global counter: seqs follow input order across shards, so ties sort by insertion.
    const last = Number(await this.client.hincrby(this.keys.meta, 'seq', tasks.length));
    const first = last - tasks.length + 1;
    const parkFrom = firstParkBucket(now, this.horizonMs);
    const args = tasks.map((t, i): ScheduleArgs => {
      const bucket = parkBucketOf(t.runAt);
      return { id: t.id, topic: t.topic, lane: laneOf(t.topic, t.url), body: encodeNewTask(t, first + i, now), runAt: t.runAt, seq: first + i, parkBucket: bucket >= parkFrom ? bucket : null };
    });
    const outcomes = await this.byShard(args, async (shard, chunk) => {
      const replies = await scheduleScript(this.client, this.shard(shard), now, chunk, parkFrom);
      return chunk.map((arg, i): ScheduleOutcome => {
        const reply = replies[i]!;
        // An existing pending task gets its timer too: this call may repeat one whose reply
        // was lost after it created the task, and nothing else would put that in a wheel.
        const ref: TimerRef | null = reply.pending ? { id: arg.id, topic: arg.lane ?? arg.topic, kind: 'run', dueAt: reply.runAt, seq: reply.seq, receipt: null } : null;
        return { id: arg.id, runAt: reply.runAt, created: reply.created, ref };
      });
    });
    this.parts.remoteTimers.publish(
      outcomes.flatMap((o) => (o.ref ? [o.ref] : [])),
      now,
    );
    return outcomes;
  }

  async cancel(id: string, now: number): Promise<CancelOutcome> {
    this.assertOpen();
    const [outcome] = await this.cancels.submit(shardOf(id, this.shardCount), [{ id, now }]);
    return outcome!;
  }

  /** One script call per shard (per MAX_SCRIPT_BATCH ids), straight, without the per-id batcher. */
  async cancelMany(ids: readonly string[], now: number): Promise<CancelOutcome[]> {
    this.assertOpen();
    return this.byShard(ids, async (shard, chunk) => cancelScript(this.client, this.shard(shard), now, chunk));
  }

  async reschedule(id: string, runAt: number, now: number): Promise<RescheduleOutcome> {
    this.assertOpen();
    const reply = await rescheduleScript(this.client, this.shardOfId(id), now, id, runAt);
    if (reply.status !== 'rescheduled') return { status: reply.status as 'not_found' | 'not_pending' };
    const ref = runRef(id, reply);
    this.parts.remoteTimers.publish([ref], now);
    return { status: 'rescheduled', ref };
  }

  // ---------------------------------------------------------------------------------
  // Timers

  async loadDue(until: number, after: DueCursor | null, limit: number): Promise<TimerRef[]> {
    this.assertOpen();
    // Only the shards this process owns: the other processes keep the timers of theirs.
    const shards = this.parts.leases.owned();
    await Promise.all(shards.map((shard) => this.parts.unparker.prepare(shard, until)));
    const entries = await mergeDue(shards, after, limit, (shard, from, size) =>
      loadDueScript(this.client, this.shard(shard), until, from, Math.min(size, MAX_LOAD_PAGE)),
    );
    return entries.map(toRef);
  }

  // ---------------------------------------------------------------------------------
  // Consumers

  /** The engine reserves through reserveReady with this store; by ref is by id here. */
  reserveRefs(refs: readonly TimerRef[], now: number, ttrMs?: number): Promise<ReservedTask[]> {
    return reserveRefsByIds(this, refs, now, ttrMs);
  }

  async reserve(ids: readonly string[], now: number, ttrMs?: number): Promise<TaskRecord[]> {
    this.assertOpen();
    if (ids.length === 0) return [];
    const nonce = nextNonce();
    const reserved = new Map<string, TaskRecord>();
    await Promise.all(
      [...groupByShard(ids, (id) => id, this.shardCount)].map(async ([shard, group]) => {
        for (let from = 0; from < group.length; from += MAX_SCRIPT_BATCH) {
          const slice = group.slice(from, from + MAX_SCRIPT_BATCH);
          // The nonce differs per shard and slice: receipts stay unique within the call.
          const pairs = await reserveScript(this.client, this.shard(shard), now, slice, ttrMs, `${nonce}${shard.toString(36)}.${from.toString(36)}.`);
          for (const [id, body] of pairs) reserved.set(id, decodeTask(id, body).record);
        }
      }),
    );
    const out: TaskRecord[] = [];
    for (const id of ids) {
      const record = reserved.get(id);
      if (record) {
        out.push(record);
        reserved.delete(id);
      }
    }
    return out;
  }

  async ack(id: string, receipt: string, now: number): Promise<AckOutcome> {
    this.assertOpen();
    const [outcome] = await this.acks.submit(shardOf(id, this.shardCount), [{ id, receipt, now }]);
    return outcome as AckOutcome;
  }

  /**
   * Several acks at once (the engine's workers settle the handlers that finish in one turn
   * together): grouped by shard into the same batcher as `ack`, so each shard gets one
   * script call for them (and for any other acks of that shard waiting meanwhile).
   */
  async ackMany(acks: readonly AckRequest[], now: number): Promise<AckOutcome[]> {
    this.assertOpen();
    return this.byShard(
      acks,
      async (shard, chunk) => (await this.acks.submit(shard, chunk.map(({ id, receipt }) => ({ id, receipt, now })))) as AckOutcome[],
    );
  }

  async nack(id: string, receipt: string, now: number, options: StoreNackOptions): Promise<NackOutcome> {
    this.assertOpen();
    const reply = await nackScript(this.client, this.shardOfId(id), now, id, receipt, {
      delayMs: options.delayMs,
      random: options.random,
      error: options.error ?? null,
    });
    return this.nackOutcome(id, reply, now);
  }

  async expire(id: string, receipt: string, now: number): Promise<NackOutcome> {
    this.assertOpen();
    return this.nackOutcome(id, await expireScript(this.client, this.shardOfId(id), now, id, receipt), now);
  }

  async defer(id: string, receipt: string, runAt: number, now: number): Promise<DeferOutcome> {
    this.assertOpen();
    const reply = await deferScript(this.client, this.shardOfId(id), now, id, receipt, runAt);
    if (reply.status !== 'deferred') return { status: reply.status as 'not_found' | 'stale' };
    const ref = runRef(id, reply);
    // The timer goes to the shard's owner, as a nack's retry does.
    this.parts.remoteTimers.publish([ref], now);
    return { status: 'deferred', ref };
  }

  // ---------------------------------------------------------------------------------
  // Inspection

  async get(id: string): Promise<TaskRecord | null> {
    this.assertOpen();
    const body = await this.call(() => this.client.hget(this.shardOfId(id).pool, id));
    return body === null ? null : decodeTask(id, body).record;
  }

  /**
   * Scans every shard's pool (HSCAN, 1,000 a step) and keeps the first `limit` matches in
   * id order. O(tasks): an operator's tool, not a hot path. Dead and reserved tasks are
   * listed from the shards' own indexes instead (listIndexed).
   */
  async list(filter: ListFilter): Promise<TaskRecord[]> {
    this.assertOpen();
    if (filter.state === 'dead' || filter.state === 'reserved') return this.listIndexed(filter, filter.state);
    let best: TaskRecord[] = [];
    const consider = (record: TaskRecord): void => {
      if (filter.afterId !== undefined && record.id <= filter.afterId) return;
      if (filter.topic !== undefined && record.topic !== filter.topic) return;
      if (filter.state !== undefined && record.state !== filter.state) return;
      best.push(record);
      if (best.length > filter.limit * 2 + 1_000) best = sortById(best).slice(0, filter.limit);
    };
    for (const shard of this.keys.shards) {
      let cursor = '0';
      do {
        const [next, flat] = await this.call(() => this.client.hscan(shard.pool, cursor, 'COUNT', 1_000));
        for (let i = 0; i + 1 < flat.length; i += 2) consider(decodeTask(flat[i]!, flat[i + 1]!).record);
        cursor = next;
      } while (cursor !== '0');
    }
    return sortById(best).slice(0, filter.limit);
  }

  /**
   * Dead letters and reservations are usually a few among many, and every shard indexes
   * them (its `dead` and `reserved` ZSETs): their ids come from there, and only the bodies
   * of the page are read, a chunk at a time while a topic filter leaves it short. O(tasks
   * in that state), where the scan of the pools is O(all tasks): 20 dead letters among
   * 1,000,000 tasks took seconds that way.
   */
  private async listIndexed(filter: ListFilter, state: 'dead' | 'reserved'): Promise<TaskRecord[]> {
    const perShard = await Promise.all(
      this.keys.shards.map(async (shard) =>
        state === 'dead'
          ? this.call(() => this.client.zrange(shard.dead, 0, -1))
          : // Members are a 7-byte seq then the id: read as bytes, the seq may not be UTF-8.
            (await this.call(() => this.client.zrangeBuffer(shard.reserved, 0, -1))).map((member) => member.subarray(SEQ_BYTES).toString()),
      ),
    );
    const after = filter.afterId;
    const ids = perShard
      .flat()
      .filter((id) => after === undefined || id > after)
      .sort(compareIds);
    const out: TaskRecord[] = [];
    const chunkSize = Math.max(filter.limit, 100);
    for (let from = 0; from < ids.length && out.length < filter.limit; from += chunkSize) {
      const chunk = ids.slice(from, from + chunkSize);
      const bodies = await this.byShard(chunk, (shard, group) => this.call(() => this.client.hmget(this.keys.shards[shard]!.pool, ...group)));
      chunk.forEach((id, i) => {
        const body = bodies[i];
        if (body === null || body === undefined || out.length >= filter.limit) return;
        // The body decides: the index and the pool change in the same script, but a task
        // may change state between the two reads here.
        const record = decodeTask(id, body).record;
        if (record.state === state && (filter.topic === undefined || record.topic === filter.topic)) out.push(record);
      });
    }
    return out;
  }

  async stats(): Promise<StoreStats> {
    this.assertOpen();
    const byState = Object.fromEntries(TASK_STATES.map((s) => [s, 0])) as Record<TaskState, number>;
    const byTopic: Record<string, Partial<Record<TaskState, number>>> = {};
    const all = await Promise.all(this.keys.shards.map((shard) => this.call(() => this.client.hgetall(shard.counts))));
    for (const counts of all) {
      for (const [field, value] of Object.entries(counts)) {
        const state = stateOfChar(field.charAt(0));
        const n = Number(value);
        if (state === undefined || n === 0) continue;
        const topic = field.slice(1);
        byState[state] += n;
        const topicCounts = (byTopic[topic] ??= {});
        topicCounts[state] = (topicCounts[state] ?? 0) + n;
      }
    }
    return { byState, byTopic };
  }

  /**
   * Per shard, two parts: the tasks in `delayed` and the parked ones (parking.ts), each
   * pending task being in exactly one of them.
   *
   * - `delayed`, all topics: ZCOUNT per bucket (O(log n) each). Of one topic (`delayed` has
   *   no topic): its members in [from, to) are read with their bodies' topics (due-read.lua).
   * - Parked, in buckets of whole hours from a whole hour: the per-hour counts the scripts
   *   keep (keys.ts `parkedh`, includes/parked.lua), all topics or the topic's, one HMGET.
   *   In finer buckets (they need each task's runAt): the ids of the park lists that overlap
   *   [from, to), checked against their bodies (due-read.lua). Lists a namespace parked
   *   before the counts existed are read that way at any grain (parked-init.lua).
   *
   * What is read task by task stops at HISTOGRAM_READ_CAP entries per query (shared by the
   * shards): then coveredUntil is the time up to which everything was read. So the cost is
   * O(buckets x shards) for all topics by hour, and O(tasks read, capped) otherwise: the
   * cost model of the SQLite store, which reads its index range. The ZCOUNTs and hour
   * counts of a shard are one MULTI (one moment of the shard); what is read task by task is
   * not: a task that moves between those reads (unparked, rescheduled, reserved) may be
   * missed or seen twice, as with any read of several shards.
   */
  async dueHistogram(query: DueHistogramQuery): Promise<DueHistogram> {
    this.assertOpen();
    const { from, to, bucketMs } = query;
    const counts = new Array<number>(Math.ceil((to - from) / bucketMs)).fill(0);
    const shards = this.keys.shards;
    const budget = Math.max(DUE_READ_CHUNK, Math.floor(HISTOGRAM_READ_CAP / shards.length));
    const covered = await Promise.all(shards.map((shard) => this.call(() => this.histogramOfShard(shard, query, counts, budget))));
    return { counts, coveredUntil: Math.max(from, Math.min(to, ...covered)) };
  }

  /** Adds one shard's pending tasks to `counts`; returns the time up to which they are all counted. */
  private async histogramOfShard(shard: ShardKeys, query: DueHistogramQuery, counts: number[], budget: number): Promise<number> {
    const { from, to, bucketMs, topic } = query;
    const byHour = inWholeHours(query);
    const add = (runAt: number, n: number): void => {
      if (runAt >= from && runAt < to) counts[Math.floor((runAt - from) / bucketMs)]! += n;
    };
    const left = { entries: budget };
    let covered = to;
    // One MULTI (one slot): the listed park buckets, what the counts count, and for all
    // topics the ZCOUNTs and the hour counts, all of the same moment.
    const hours: number[] = [];
    if (byHour) for (let hour = from / PARKED_COUNT_GRAIN_MS; hour < to / PARKED_COUNT_GRAIN_MS; hour++) hours.push(hour);
    const field = (hour: number): string => (topic === undefined ? String(hour) : `${hour}:${topic}`);
    const readAllHours = hours.length > MAX_HOUR_FIELDS;
    const multi = this.client.multi().zrange(shard.parked, 0, -1).hget(shard.parkedCounts, 'from');
    if (byHour) {
      if (readAllHours) multi.hgetall(shard.parkedCounts);
      else multi.hmget(shard.parkedCounts, ...hours.map(field));
    }
    if (topic === undefined) counts.forEach((_, i) => multi.zcount(shard.delayed, from + i * bucketMs, `(${Math.min(to, from + (i + 1) * bucketMs)}`));
    const replies = await multi.exec();
    if (replies === null) throw new Error('dueHistogram: MULTI aborted');
    const results = replies.map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    const listed = (results[0] as string[]).map(Number);
    const countedFrom = Number(results[1] ?? 0);
    let at = 2;
    if (byHour) {
      const reply = results[at++];
      if (readAllHours) {
        const all = reply as Record<string, string>;
        for (const hour of hours) add(hour * PARKED_COUNT_GRAIN_MS, Number(all[field(hour)] ?? 0));
      } else {
        (reply as (string | null)[]).forEach((n, i) => add(hours[i]! * PARKED_COUNT_GRAIN_MS, Number(n ?? 0)));
      }
    }
    if (topic === undefined) {
      for (let i = 0; i < counts.length; i++) counts[i]! += Number(results[at + i]);
    } else {
      covered = Math.min(covered, await this.readDelayedOfTopic(shard, from, to, topic, left, add));
    }
    // The parked tasks no count holds: every list by the minute, the uncounted ones by the hour.
    const lists = listed.filter((bucket) => bucket * PARK_BUCKET_MS < to && (bucket + 1) * PARK_BUCKET_MS > from && (!byHour || bucket < countedFrom));
    covered = Math.min(covered, await this.readParkLists(shard, lists.sort((a, b) => a - b), topic, left, add));
    return covered;
  }

  /** The topic's members of `delayed` in [from, to), read in order while the budget lasts; returns the time read up to. */
  private async readDelayedOfTopic(
    shard: ShardKeys,
    from: number,
    to: number,
    topic: string,
    left: { entries: number },
    add: (runAt: number, n: number) => void,
  ): Promise<number> {
    let last = from;
    for (let offset = 0; ; ) {
      const count = Math.min(DUE_READ_CHUNK, left.entries);
      // Out of budget: every member due before the last one read was read.
      if (count <= 0) return last;
      const page = await dueReadDelayedScript(this.client, shard, from, to, offset, count, topic);
      for (const runAt of page.runAts) add(runAt, 1);
      left.entries -= page.read;
      offset += page.read;
      last = page.last;
      if (page.read < count) return to;
    }
  }

  /** The tasks still parked in `buckets` (ascending), whole lists while the budget lasts; returns the time read up to. */
  private async readParkLists(
    shard: ShardKeys,
    buckets: readonly number[],
    topic: string | undefined,
    left: { entries: number },
    add: (runAt: number, n: number) => void,
  ): Promise<number> {
    if (buckets.length === 0) return Number.POSITIVE_INFINITY;
    const pipeline = this.client.pipeline();
    for (const bucket of buckets) pipeline.llen(shard.park(bucket));
    const lengths = ((await pipeline.exec()) ?? []).map(([error, n]) => {
      if (error) throw error;
      return Number(n);
    });
    for (let k = 0; k < buckets.length; k++) {
      const bucket = buckets[k]!;
      // A list read whole or not at all: what is due before it was all read.
      if (lengths[k]! > left.entries) return bucket * PARK_BUCKET_MS;
      left.entries -= lengths[k]!;
      // An id counts once per list (a stale entry and a new task of its id may both be in it).
      const seen = new Set<string>();
      for (let start = 0; start < lengths[k]!; start += DUE_READ_CHUNK) {
        const page = await dueReadParkedScript(this.client, shard, bucket, start, start + DUE_READ_CHUNK - 1, topic);
        for (const [id, runAt] of page.parked) {
          if (seen.has(id)) continue;
          seen.add(id);
          add(runAt, 1);
        }
        if (page.read < DUE_READ_CHUNK) break;
      }
    }
    return Number.POSITIVE_INFINITY;
  }

  async cancelDead(id: string, now: number): Promise<CancelDeadOutcome> {
    this.assertOpen();
    return (await cancelDeadScript(this.client, this.shardOfId(id), now, id)) as CancelDeadOutcome;
  }

  async retryDead(id: string, runAt: number, now: number): Promise<RetryDeadOutcome> {
    this.assertOpen();
    const reply = await retryDeadScript(this.client, this.shardOfId(id), now, id, runAt);
    if (reply.status !== 'retried') return { status: reply.status as 'not_found' | 'not_dead' };
    const ref = runRef(id, reply);
    this.parts.remoteTimers.publish([ref], now);
    return { status: 'retried', ref };
  }

  async purge(before: number, limit: number): Promise<number> {
    this.assertOpen();
    let deleted = 0;
    for (const shard of this.keys.shards) {
      while (deleted < limit) {
        const step = Math.min(1_000, limit - deleted);
        const n = await purgeScript(this.client, shard, before, step);
        deleted += n;
        if (n === 0) break;
      }
    }
    return deleted;
  }

  // ---------------------------------------------------------------------------------
  // Push subscriptions: fields of one hash (keys.ts `push`), plain commands, no script:
  // each call reads or writes one field, or reads the whole (small) hash.

  async putPushSubscription(subscription: PushSubscription): Promise<void> {
    this.assertOpen();
    const json = encodePushSubscription(subscription);
    await this.write(`hset ${this.keys.push}`, () => this.client.hset(this.keys.push, subscription.topic, json), (p) => p.hset(this.keys.push, subscription.topic, json));
  }

  async getPushSubscription(topic: string): Promise<PushSubscription | null> {
    this.assertOpen();
    const json = await this.call(() => this.client.hget(this.keys.push, topic));
    return json === null ? null : this.decodePush(topic, json);
  }

  async listPushSubscriptions(): Promise<PushSubscription[]> {
    this.assertOpen();
    const fields = await this.call(() => this.client.hgetall(this.keys.push));
    const subscriptions: PushSubscription[] = [];
    for (const [topic, json] of Object.entries(fields)) {
      const subscription = this.decodePush(topic, json);
      if (subscription !== null) subscriptions.push(subscription);
    }
    return subscriptions.sort(byTopic);
  }

  async deletePushSubscription(topic: string): Promise<boolean> {
    this.assertOpen();
    return Number(await this.write(`hdel ${this.keys.push}`, () => this.client.hdel(this.keys.push, topic), (p) => p.hdel(this.keys.push, topic))) > 0;
  }

  /** A field that is not a subscription is skipped, not thrown: one bad field must not stop the pushes of every topic. */
  private decodePush(topic: string, json: string): PushSubscription | null {
    return decodedOrWarn(decodePushSubscription(topic, json), 'push subscription', this.description, { topic }, this.parts.logger);
  }

  // ---------------------------------------------------------------------------------
  // Recurring schedules: fields of one hash (keys.ts `schedules`); the swap is a script.

  async putSchedule(record: ScheduleRecord): Promise<void> {
    this.assertOpen();
    await this.putSchedules([record]);
  }

  async getSchedule(id: string): Promise<ScheduleRecord | null> {
    this.assertOpen();
    const json = await this.call(() => this.client.hget(this.keys.schedules, id));
    return json === null ? null : this.decodeScheduleField(id, json);
  }

  async putSchedules(records: readonly ScheduleRecord[]): Promise<void> {
    this.assertOpen();
    if (records.length === 0) return;
    // A script (both keys are in the meta slot): no reader sees the write without the bump,
    // and under waitReplicas it waits for the replicas like every task write.
    await this.call(() => putSchedulesScript(this.client, this.keys, records.map((r) => [r.id, encodeSchedule(r)] as const)));
  }

  async putNewSchedules(records: readonly ScheduleRecord[]): Promise<(ScheduleRecord | null)[]> {
    this.assertOpen();
    if (records.length === 0) return [];
    const texts = await this.call(() => putNewSchedulesScript(this.client, this.keys, records.map((r) => [r.id, encodeSchedule(r)] as const)));
    const answers = texts.map((text, i) => (text === '' ? null : this.decodeScheduleField(records[i]!.id, text)));
    // Stored but unreadable, which reads as no schedule: set again, as an upsert would.
    const unreadable = records.filter((_, i) => texts[i] !== '' && answers[i] === null);
    if (unreadable.length > 0) await this.putSchedules(unreadable);
    return answers;
  }

  async getSchedules(ids: readonly string[]): Promise<(ScheduleRecord | null)[]> {
    this.assertOpen();
    if (ids.length === 0) return [];
    const texts = await this.call(() => this.client.hmget(this.keys.schedules, ...ids));
    return ids.map((id, i) => {
      const json = texts[i];
      return json === null || json === undefined ? null : this.decodeScheduleField(id, json);
    });
  }

  async listSchedules(): Promise<ScheduleRecord[]> {
    this.assertOpen();
    // HSCAN in pages, each decoded as it comes, not one HGETALL: a reply of 10,000 schedules
    // (~3 MB) was parsed and decoded in one go, holding the event loop ~100 ms while
    // deliveries were due (ADR 0031). A field present throughout the scan is returned, maybe
    // twice: the Map keeps one.
    const schedules = new Map<string, ScheduleRecord>();
    let cursor = '0';
    do {
      const [next, flat] = await this.call(() => this.client.hscan(this.keys.schedules, cursor, 'COUNT', SCHEDULE_SCAN_COUNT));
      const page: Array<readonly [string, string]> = [];
      for (let i = 0; i < flat.length; i += 2) page.push([flat[i]!, flat[i + 1]!]);
      for (const schedule of decodeSchedules(page, (id, json) => this.decodeScheduleField(id, json))) schedules.set(schedule.id, schedule);
      cursor = next;
    } while (cursor !== '0');
    return [...schedules.values()].sort(byId);
  }

  async deleteSchedule(id: string): Promise<boolean> {
    this.assertOpen();
    return this.call(() => deleteScheduleScript(this.client, this.keys, id));
  }

  async swapSchedule(expected: ScheduleRecord, next: ScheduleRecord): Promise<boolean> {
    const [swapped] = await this.swapSchedules([{ expected, next }]);
    return swapped === true;
  }

  async swapSchedules(swaps: readonly ScheduleSwap[]): Promise<boolean[]> {
    this.assertOpen();
    const text = (s: ScheduleSwap) => [s.expected.id, encodeSchedule(s.expected), encodeSchedule(s.next)] as const;
    // The loop's moves (almost every swap) and definition changes go in separate calls:
    // only the latter bump the version, and a call holds one kind.
    const changes = swaps.map(swapChangesDefinition);
    if (!changes.includes(true)) return swapScheduleScript(this.client, this.keys, false, swaps.map(text));
    if (!changes.includes(false)) return swapScheduleScript(this.client, this.keys, true, swaps.map(text));
    const moved = await swapScheduleScript(this.client, this.keys, false, swaps.filter((_, i) => !changes[i]).map(text));
    const changed = await swapScheduleScript(this.client, this.keys, true, swaps.filter((_, i) => changes[i]).map(text));
    return changes.map((change) => (change ? changed.shift() : moved.shift()) === true);
  }

  async schedulesVersion(): Promise<string> {
    this.assertOpen();
    return (await this.call(() => this.client.get(this.keys.schedulesVersion))) ?? '0';
  }

  private decodeScheduleField(id: string, json: string): ScheduleRecord | null {
    return decodedOrWarn(decodeSchedule(id, json), 'schedule', this.description, { id }, this.parts.logger);
  }

  // ---------------------------------------------------------------------------------
  // Shared dispatch

  async promote(refs: readonly TimerRef[], now: number): Promise<void> {
    this.assertOpen();
    await this.parts.promoter.promote(refs, now);
  }

  async reserveReady(topic: string, max: number, now: () => number, ttrMs: number | undefined, signal: AbortSignal): Promise<TaskRecord[]> {
    this.assertOpen();
    return this.parts.reserver.reserveReady(topic, max, now, ttrMs, signal);
  }

  onRemoteTimer(listener: (ref: TimerRef) => void): void {
    this.parts.remoteTimers.listen(listener);
  }

  // ---------------------------------------------------------------------------------

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** Stops the parts in the reverse of the order index.ts started them. */
  private async shutdown(): Promise<void> {
    const { reserver, kept, recoverer, remoteTimers, keeper, subscriber, unparker } = this.parts;
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

  /**
   * Batch operations: `items` grouped by the shard of their id, `call` once per shard and
   * chunk of MAX_SCRIPT_BATCH (a shard's chunks in turn, shards in parallel); each chunk's
   * outputs land at its items' places, so the result is in input order.
   */
  private async byShard<T extends string | { readonly id: string }, O>(
    items: readonly T[],
    call: (shard: number, chunk: T[]) => Promise<readonly O[]>,
  ): Promise<O[]> {
    const out = new Array<O>(items.length);
    const indexes = items.map((_, i) => i);
    const idOf = (i: number): string => {
      const item = items[i]!;
      return typeof item === 'string' ? item : item.id;
    };
    await Promise.all(
      [...groupByShard(indexes, idOf, this.shardCount)].map(async ([shard, group]) => {
        for (let from = 0; from < group.length; from += MAX_SCRIPT_BATCH) {
          const slice = group.slice(from, from + MAX_SCRIPT_BATCH);
          const outputs = await call(shard, slice.map((i) => items[i]!));
          slice.forEach((i, k) => (out[i] = outputs[k]!));
        }
      }),
    );
    return out;
  }

  // ---------------------------------------------------------------------------------

  private shard(index: number): ShardKeys {
    return this.keys.shards[index]!;
  }

  private shardOfId(id: string): ShardKeys {
    return this.shard(shardOf(id, this.shardCount));
  }

  private assertOpen(): void {
    if (this.closed) throw new DelayQError('QUEUE_CLOSED', `the redis store (${this.description}) is closed`);
  }

  /** Plain (non-script) commands: Redis errors become STORE_UNAVAILABLE. */
  /** A plain write command: under waitReplicas, in a pipeline with WAIT (replication.ts). */
  private async write(what: string, command: () => Promise<unknown>, queue: (pipeline: ChainableCommander) => void): Promise<unknown> {
    const wait = waitSetting(this.client);
    if (wait === undefined) return this.call(command);
    return this.call(() => execAndWait(this.client, wait, what, queue));
  }

  private async call<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      if (error instanceof DelayQError) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw new DelayQError('STORE_UNAVAILABLE', `redis: ${message}`, {}, { cause: error });
    }
  }

  private nackOutcome(id: string, reply: MoveReply, now: number): NackOutcome {
    if (reply.status === 'retrying') {
      const ref = runRef(id, reply);
      this.parts.remoteTimers.publish([ref], now);
      return { status: 'retrying', ref };
    }
    return { status: reply.status as 'dead' | 'not_found' | 'stale' };
  }
}

function runRef(id: string, reply: MoveReply): TimerRef {
  return { id, topic: reply.topic, kind: 'run', dueAt: reply.runAt, seq: reply.seq, receipt: null };
}

function toRef(entry: DueEntry): TimerRef {
  return { id: entry.id, topic: entry.topic, kind: entry.kind, dueAt: entry.dueAt, seq: entry.seq, receipt: entry.receipt };
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortById(records: TaskRecord[]): TaskRecord[] {
  return records.sort((a, b) => compareIds(a.id, b.id));
}
