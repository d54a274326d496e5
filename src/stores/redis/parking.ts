/**
 * Parking: far-future tasks are kept out of the `delayed` ZSET until their time comes near.
 *
 * Why: a ZSET entry costs ~120 bytes of Redis memory per task (skiplist node, dict entry,
 * the member string), as much as the task's body. Most pending tasks of a delay queue are
 * far ahead (an order closed in 30 min, a rating in 48 h), and nothing needs them sorted
 * until they come near. So schedule.lua appends the id of a task due in a later bucket of
 * PARK_BUCKET_MS (~17.5 min) to that bucket's list (~20 bytes), and this module moves each
 * bucket into `delayed` (unpark.lua) before loadDue can reach it.
 *
 *   now 10:00, horizon 60 s          buckets of ~17.5 min: 34 (now), 35, 36, ...
 *   schedule(runAt 10:05)            -> delayed (bucket 34 < first park bucket 36)
 *   schedule(runAt 14:00)            -> park:48 (48 >= parkfrom 36)
 *   loadDue(until 10:01)             -> parkfrom raised to 35 (required) and 36 (in the background)
 *
 * Per shard, `parkfrom` is the first bucket that may hold parked tasks: every pending task
 * due before it is in `delayed`. unpark.lua raises it before it drains the lists below, so
 * those lists only shrink. loadDue(until) first makes sure parkfrom is past until's bucket
 * (usually already true: the next bucket is drained in the background one bucket ahead),
 * then reads `delayed` as before. Parking is only ever a choice: a task in `delayed` is
 * always correct, so tasks within a bucket of the horizon, moved tasks (reschedule, nack,
 * retryDead) and tasks of a shard whose parkfrom is already past their bucket go there.
 */
import { unparkScript } from './parking-commands.js';
import type { RedisClient } from './connection.js';
import type { ShardKeys } from './keys.js';
import { call } from './plain-commands.js';

/** ~17.5 minutes: tasks due further ahead than one to two of these are parked (ADR 0010). */
export const PARK_BUCKET_MS = 2 ** 20;
/** Ids taken from the park lists per unpark call: a few ms of Redis time at most. */
const UNPARK_LIMIT = 1_000;
/** Park lists named per unpark call (each is one KEY). */
const BUCKETS_PER_CALL = 32;

export function parkBucketOf(time: number): number {
  return Math.floor(time / PARK_BUCKET_MS);
}

/**
 * The first bucket a task scheduled at `now` may be parked in: a whole bucket past the
 * horizon, so loadDue's own unparking (one bucket ahead) is never in a hurry.
 */
export function firstParkBucket(now: number, horizonMs: number): number {
  return parkBucketOf(now + horizonMs) + 2;
}

export class Unparker {
  /** Per shard: parkfrom is known to be at least this (it only ever goes up). */
  private readonly known: number[];
  private readonly ahead = new Map<number, Promise<void>>();

  constructor(
    private readonly client: RedisClient,
    private readonly shards: readonly ShardKeys[],
  ) {
    this.known = shards.map(() => Number.NEGATIVE_INFINITY);
  }

  /**
   * Before `delayed` of `shard` is read up to `until`: every task due before `until` is out
   * of the park lists. Starts unparking the bucket after that in the background.
   */
  async prepare(shard: number, until: number): Promise<void> {
    if (!Number.isFinite(until)) return this.drainAll(shard);
    const needed = parkBucketOf(until) + 1;
    if (this.known[shard]! < needed) await this.drain(shard, needed);
    this.startAhead(shard, needed + 1);
  }

  /** Waits for background unparking (close() calls it before the connection goes). */
  async settle(): Promise<void> {
    await Promise.all(this.ahead.values());
  }

  private startAhead(shard: number, target: number): void {
    if (this.known[shard]! >= target || this.ahead.has(shard)) return;
    const work = this.drain(shard, target)
      // A failure here costs nothing: the next loadDue drains whatever it needs itself.
      .catch(() => undefined)
      .finally(() => this.ahead.delete(shard));
    this.ahead.set(shard, work);
  }

  private async drain(shard: number, target: number): Promise<void> {
    const keys = this.shards[shard]!;
    for (;;) {
      const listed = await call(() => this.client.zrangebyscore(keys.parked, '-inf', `(${target}`, 'LIMIT', 0, BUCKETS_PER_CALL));
      const reply = await unparkScript(this.client, keys, target, listed.map(Number), UNPARK_LIMIT);
      this.known[shard] = Math.max(this.known[shard]!, reply.parkFrom);
      if (reply.remaining === 0) return;
    }
  }

  /** loadDue(Infinity): every parked task of the shard goes into `delayed`. */
  private async drainAll(shard: number): Promise<void> {
    const [last] = await call(() => this.client.zrange(this.shards[shard]!.parked, -1, -1));
    if (last !== undefined) await this.drain(shard, Number(last) + 1);
  }
}
