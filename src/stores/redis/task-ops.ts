/**
 * The Redis store's task operations: each a script on the shard of the task's id, batches
 * one script call per shard (and per MAX_SCRIPT_BATCH), and the timers of tasks made
 * pending published to the owners of their shards (coordination/remote-timers.ts).
 */
import { MAX_ERROR_LENGTH, storableText } from '../../core/text.js';
import { reserveRefsByIds } from '../../core/batch-fallbacks.js';
import type { QuarantineRequest, StoreAckOutcome, TopicPurgeRequest, TopicPurgeStep, AckRequest, CancelDeadOutcome, StoreCancelOutcome, DeferOutcome, DeferRequest, DueCursor, ExpireOutcome, ExtendOutcome, ExtendRequest, NackOutcome, RescheduleOutcome, RetryDeadOutcome, ScheduleOutcome, TaskRoles, FlowLease, NackRequest } from '../../core/ports/index.js';
import { laneOf, type NewTaskRecord, type ReservedTask, type TaskRecord, type TimerRef } from '../../core/task/model.js';
import { onPartial } from '../../core/partial-batch.js';
import { ShardBatcher } from '../../coordination/batcher.js';
import { mergeDue } from '../shared/due-merge.js';
import { nextNonce } from '../shared/nonce.js';
import { groupByShard, mapByShard, shardOf } from '../../coordination/router.js';
import { decodeTask, encodeNewTask } from './codec.js';
import { ackScript, quarantineScript, cancelDeadScript, cancelScript, deferScript, expireScript, extendScript, loadDueScript, nackScript, purgeScript, purgeTopicScript, rescheduleScript, reserveScript, retryDeadScript, scheduleScript, type DueEntry, type MoveReply, type ScheduleArgs, reservedOfScript } from './commands.js';
import { call as redisCall } from './plain-commands.js';
import { MAX_SCRIPT_BATCH } from './script-runner.js';
import type { RedisClient } from './connection.js';
import type { Keyspace, ShardKeys } from './keys.js';
import { firstParkBucket, parkBucketOf } from './parking.js';
import type { RedisStoreParts } from './redis-store.js';

const MAX_LOAD_PAGE = 2_000;

export class RedisTaskOps {
  private readonly client: RedisClient;
  private readonly keys: Keyspace;
  private readonly shardCount: number;
  private readonly acks: ShardBatcher<{ id: string; receipt: string; now: number }, StoreAckOutcome>;
  private readonly cancels: ShardBatcher<{ id: string; now: number }, StoreCancelOutcome>;

  constructor(
    private readonly parts: RedisStoreParts,
    /** The tasks role (redis-tasks.ts), whose reserve reserveRefs goes through. */
    private readonly store: Pick<TaskRoles, 'reserve'>,
  ) {
    this.client = parts.client;
    this.keys = parts.keys;
    this.shardCount = parts.keys.shards.length;
    // A batch runs at the latest `now` of its items: each caller's now is a lower bound
    // of the time of the change, and updatedAt only orders purges.
    this.acks = new ShardBatcher(
      (shard, items) => this.tracked(shard, () => ackScript(this.client, this.shard(shard), Math.max(...items.map((i) => i.now)), items)),
      MAX_SCRIPT_BATCH,
    );
    this.cancels = new ShardBatcher(
      (shard, items) => this.tracked(shard, () => cancelScript(this.client, this.shard(shard), Math.max(...items.map((i) => i.now)), items.map((i) => i.id))),
      MAX_SCRIPT_BATCH,
    );
  }

  // ---------------------------------------------------------------------------------
  // Producers

  async schedule(tasks: readonly NewTaskRecord[], now: number): Promise<ScheduleOutcome[]> {
    if (tasks.length === 0) return [];
    // One global counter: seqs follow input order across shards, so ties sort by insertion.
    const last = Number(await redisCall(() => this.client.hincrby(this.keys.meta, 'seq', tasks.length)));
    const first = last - tasks.length + 1;
    const parkFrom = firstParkBucket(now, this.parts.horizonMs);
    const args = tasks.map((t, i): ScheduleArgs => {
      const bucket = parkBucketOf(t.runAt);
      return { id: t.id, topic: t.topic, lane: laneOf(t.topic, t.url), body: encodeNewTask(t, first + i, now), runAt: t.runAt, seq: first + i, parkBucket: bucket >= parkFrom ? bucket : null };
    });
    const publish = (done: readonly (ScheduleOutcome | undefined)[]): void =>
      this.parts.remoteTimers.publish(
        done.flatMap((o) => (o?.ref ? [o.ref] : [])),
        now,
      );
    const outcomes = await this.byShard(args, async (shard, chunk) => {
      const replies = await scheduleScript(this.client, this.shard(shard), now, chunk, parkFrom);
      return chunk.map((arg, i): ScheduleOutcome => {
        const reply = replies[i]!;
        // An existing pending task gets its timer too: this call may repeat one whose reply
        // was lost after it created the task, and nothing else would put that in a wheel.
        const ref: TimerRef | null = reply.pending ? { id: arg.id, topic: arg.lane ?? arg.topic, kind: 'run', dueAt: reply.runAt, seq: reply.seq, receipt: null } : null;
        return { id: arg.id, runAt: reply.runAt, created: reply.created, ref };
      });
    }).catch((error: unknown) => onPartial(error, publish));
    publish(outcomes);
    return outcomes;
  }

  async cancel(id: string, now: number): Promise<StoreCancelOutcome> {
    const [outcome] = await this.cancels.submit(shardOf(id, this.shardCount), [{ id, now }]);
    return outcome!;
  }

  /** One script call per shard (per MAX_SCRIPT_BATCH ids), straight, without the per-id batcher. */
  async cancelMany(ids: readonly string[], now: number): Promise<StoreCancelOutcome[]> {
    return this.byShard(ids, async (shard, chunk) => cancelScript(this.client, this.shard(shard), now, chunk));
  }

  async reschedule(id: string, runAt: number, now: number): Promise<RescheduleOutcome> {
    const reply = await this.trackedById(id, () => rescheduleScript(this.client, this.shardOfId(id), now, id, runAt));
    if (reply.status !== 'rescheduled') return { status: reply.status as 'not_found' | 'not_pending' };
    const ref = runRef(id, reply);
    this.parts.remoteTimers.publish([ref], now);
    return { status: 'rescheduled', ref };
  }

  // ---------------------------------------------------------------------------------
  // Timers

  async loadDue(until: number, after: DueCursor | null, limit: number): Promise<TimerRef[]> {
    // Only the shards this process owns: the other processes keep the timers of theirs. A
    // shard that cannot be written (or read) now is left out, not the whole load: it is
    // loaded whole again once it takes writes (index.ts, ShardHealth.onRecovered).
    const { leases, health, unparker } = this.parts;
    const skip = (shard: number, error: unknown): void => {
      if (!health.failed(shard, error)) throw error;
    };
    const prepared = await Promise.all(
      leases
        .owned()
        .filter((shard) => health.available(shard))
        .map(async (shard) => {
          try {
            await unparker.prepare(shard, until);
            return shard;
          } catch (error) {
            skip(shard, error);
            return null;
          }
        }),
    );
    const shards = prepared.filter((shard): shard is number => shard !== null);
    const entries = await mergeDue(shards, after, limit, async (shard, from, size) => {
      if (!health.available(shard)) return [];
      try {
        return await loadDueScript(this.client, this.shard(shard), until, from, Math.min(size, MAX_LOAD_PAGE));
      } catch (error) {
        skip(shard, error);
        return [];
      }
    });
    return entries.map(toRef);
  }

  // ---------------------------------------------------------------------------------
  // Consumers

  /** The engine reserves through reserveReady with this store; by ref is by id here. */
  reserveRefs(refs: readonly TimerRef[], now: number, ttrMs?: number): Promise<ReservedTask[]> {
    return reserveRefsByIds(this.store, refs, now, ttrMs);
  }

  async reserve(ids: readonly string[], now: number, ttrMs?: number): Promise<TaskRecord[]> {
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

  async ack(id: string, receipt: string, now: number): Promise<StoreAckOutcome> {
    const [outcome] = await this.acks.submit(shardOf(id, this.shardCount), [{ id, receipt, now }]);
    return outcome!;
  }

  /**
   * Several acks at once (the engine's workers settle the handlers that finish in one turn
   * together): grouped by shard into the same batcher as `ack`, so each shard gets one
   * script call for them (and for any other acks of that shard waiting meanwhile).
   */
  async ackMany(acks: readonly AckRequest[], now: number): Promise<StoreAckOutcome[]> {
    return this.byShard(acks, (shard, chunk) => this.acks.submit(shard, chunk.map(({ id, receipt }) => ({ id, receipt, now }))));
  }

  async nack({ id, receipt, now, ...options }: NackRequest): Promise<NackOutcome> {
    const reply = await this.trackedById(id, () =>
      nackScript(this.client, this.shardOfId(id), now, id, receipt, {
        delayMs: options.delayMs,
        random: options.random,
        error: options.error === undefined ? null : storableText(options.error, MAX_ERROR_LENGTH),
        outcome: options.outcome ?? 'nacked',
      }),
    );
    return this.nackOutcome(id, reply, now);
  }

  async expire(id: string, receipt: string, now: number): Promise<ExpireOutcome> {
    const reply = await this.trackedById(id, () => expireScript(this.client, this.shardOfId(id), now, id, receipt));
    // Extended since its timer was set: the timer goes back to whoever expires it, at the new end.
    if (reply.status === 'held') return { status: 'held', ref: { id, topic: reply.topic, kind: 'ttr', dueAt: reply.runAt, seq: reply.seq, receipt } };
    return this.nackOutcome(id, reply, now);
  }

  /** One script call per shard (per MAX_SCRIPT_BATCH requests): a worker's renewals of many reservations in one call. */
  async extend(requests: readonly ExtendRequest[], now: number): Promise<ExtendOutcome[]> {
    return this.byShard(requests, (shard, chunk) => extendScript(this.client, this.shard(shard), now, chunk));
  }

  async defer({ id, receipt, runAt, now }: DeferRequest): Promise<DeferOutcome> {
    const reply = await this.trackedById(id, () => deferScript(this.client, this.shardOfId(id), now, id, receipt, runAt));
    if (reply.status !== 'deferred') return { status: reply.status as 'not_found' | 'stale' };
    const ref = runRef(id, reply);
    // The timer goes to the shard's owner, as a nack's retry does.
    this.parts.remoteTimers.publish([ref], now);
    return { status: 'deferred', ref };
  }

  async quarantine(tasks: readonly QuarantineRequest[], now: number): Promise<void> {
    const kept = tasks.map((task) => ({ ...task, error: storableText(task.error, MAX_ERROR_LENGTH) }));
    await this.byShard(kept, async (shard, chunk) => [await quarantineScript(this.client, this.shard(shard), now, chunk)]);
  }

  async cancelDead(id: string, now: number): Promise<CancelDeadOutcome> {
    return (await this.trackedById(id, () => cancelDeadScript(this.client, this.shardOfId(id), now, id))) as CancelDeadOutcome;
  }

  async retryDead(id: string, runAt: number, now: number): Promise<RetryDeadOutcome> {
    const reply = await this.trackedById(id, () => retryDeadScript(this.client, this.shardOfId(id), now, id, runAt));
    if (reply.status !== 'retried') return { status: reply.status as 'not_found' | 'not_dead' };
    const ref = runRef(id, reply);
    this.parts.remoteTimers.publish([ref], now);
    return { status: 'retried', ref };
  }

  /** The topic's reservations in force, from every shard (reserved-of.lua: its `reserved` index in the range, the bodies read for the topic). */
  async reservedLeases(topic: string, now: number, until: number): Promise<FlowLease[]> {
    const replies = await Promise.all(this.keys.shards.map((shard) => this.tracked(shard.index, () => reservedOfScript(this.client, shard, now, until, topic))));
    return replies.flat();
  }

  async purge(before: number, limit: number): Promise<number> {
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

  /**
   * One script call on one shard a step; the cursor is `<shard>:<HSCAN cursor>`, and a pass
   * goes through the shards in order (a Cluster runs each shard's step on its master).
   */
  async purgeTopic({ topic, state, cursor, limit }: TopicPurgeRequest): Promise<TopicPurgeStep> {
    const [shardText, scan] = cursor === null ? ['0', '0'] : cursor.split(':', 2);
    const index = Number(shardText);
    const shard = this.keys.shards[Number.isSafeInteger(index) ? index : 0] ?? this.keys.shards[0]!;
    const states = state === 'pending' ? 'p' : state === 'dead' ? 'd' : 'cx';
    const step = await this.tracked(shard.index, () => purgeTopicScript(this.client, shard, scan ?? '0', Math.min(limit, 1_000), topic, states));
    const ids = step.deleted.map((d) => d.id);
    const runs: TimerRef[] = state !== 'pending' ? [] : step.deleted.map((d) => ({ id: d.id, topic: d.lane, kind: 'run', dueAt: d.runAt, seq: d.seq, receipt: null }));
    if (step.next !== '0') return { ids, runs, next: `${shard.index}:${step.next}` };
    return { ids, runs, next: shard.index + 1 < this.shardCount ? `${shard.index + 1}:0` : null };
  }

  /**
   * Batch writes: one script call per shard and chunk of MAX_SCRIPT_BATCH, results in input
   * order; a shard that cannot be written fails only its items (PartialBatchError) and is
   * marked unavailable (shard-health.ts).
   */
  private byShard<T extends string | { readonly id: string }, O>(items: readonly T[], call: (shard: number, chunk: T[]) => Promise<readonly O[]>): Promise<O[]> {
    return mapByShard(items, this.shardCount, MAX_SCRIPT_BATCH, (shard, chunk) => this.tracked(shard, () => call(shard, chunk)));
  }

  /**
   * A write to one shard, recorded in its health; refused at once while the shard is known
   * not to take writes (it would wait out a write timeout to say so), until its probe finds
   * it back (shard-health.ts).
   */
  private tracked<R>(shard: number, call: () => Promise<R>): Promise<R> {
    return this.parts.health.track(shard, call);
  }

  private trackedById<R>(id: string, call: () => Promise<R>): Promise<R> {
    return this.tracked(shardOf(id, this.shardCount), call);
  }

  // ---------------------------------------------------------------------------------

  private shard(index: number): ShardKeys {
    return this.keys.shards[index]!;
  }

  private shardOfId(id: string): ShardKeys {
    return this.shard(shardOf(id, this.shardCount));
  }

  private nackOutcome(id: string, reply: MoveReply, now: number): NackOutcome {
    if (reply.status === 'retrying') {
      const ref = runRef(id, reply);
      this.parts.remoteTimers.publish([ref], now);
      return { status: 'retrying', ref, topic: reply.taskTopic };
    }
    if (reply.status === 'dead') return { status: 'dead', topic: reply.taskTopic };
    return { status: reply.status as 'not_found' | 'stale' };
  }
}

function runRef(id: string, reply: MoveReply): TimerRef {
  return { id, topic: reply.topic, kind: 'run', dueAt: reply.runAt, seq: reply.seq, receipt: null };
}

function toRef(entry: DueEntry): TimerRef {
  return { id: entry.id, topic: entry.topic, kind: entry.kind, dueAt: entry.dueAt, seq: entry.seq, receipt: entry.receipt };
}
