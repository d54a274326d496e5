/**
 * The Redis store's dueHistogram, from what the shards keep by time: ZCOUNTs of `delayed`,
 * the per-hour counts of parked tasks, and reads of the entries in between, capped.
 */
import { own } from '../../core/dict.js';
import { inWholeHours, PARKED_COUNT_GRAIN_MS } from '../../core/due-histogram.js';
import type { DueHistogram, DueHistogramQuery } from '../../core/ports/index.js';
import { DUE_READ_CHUNK, dueReadDelayedScript, dueReadParkedScript } from './parking-commands.js';
import type { RedisClient } from './connection.js';
import type { Keyspace, ShardKeys } from './keys.js';
import { PARK_BUCKET_MS } from './parking.js';
import { call } from './plain-commands.js';

/**
 * The most task entries one dueHistogram reads one by one (members of `delayed` for a
 * topic, ids in park lists), over all shards, in due-read.lua calls of DUE_READ_CHUNK.
 * Beyond it the answer says how far it is complete (coveredUntil).
 */
export const HISTOGRAM_READ_CAP = 100_000;
/** Hours of parked counts asked by name per shard (HMGET); more, and the shard's counts are read whole (HGETALL). */
const MAX_HOUR_FIELDS = 20_000;

export class RedisDueHistogram {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keyspace,
  ) {}

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
  async histogram(query: DueHistogramQuery): Promise<DueHistogram> {
    const { from, to, bucketMs } = query;
    const counts = new Array<number>(Math.ceil((to - from) / bucketMs)).fill(0);
    const shards = this.keys.shards;
    const budget = Math.max(DUE_READ_CHUNK, Math.floor(HISTOGRAM_READ_CAP / shards.length));
    const covered = await Promise.all(shards.map((shard) => call(() => this.histogramOfShard(shard, query, counts, budget))));
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
    const replies = await call(() => multi.exec());
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
        for (const hour of hours) add(hour * PARKED_COUNT_GRAIN_MS, Number(own(all, field(hour)) ?? 0));
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
    const lengths = ((await call(() => pipeline.exec())) ?? []).map(([error, n]) => {
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
}
