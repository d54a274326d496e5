/**
 * The typed wrappers of the parking scripts (parking.ts): moving parked tasks into
 * `delayed`, the parked counts' start, and the reads of dueHistogram (due-read.lua).
 */
import type { RedisClient } from './connection.js';
import type { ShardKeys } from './keys.js';
import { asArray, num, run, str } from './script-runner.js';

export interface UnparkReply {
  /** Ids taken from the park lists (moved into `delayed`, or dropped as stale). */
  readonly taken: number;
  /** Park buckets still listed before the target: call again while this is above 0. */
  readonly remaining: number;
  /** The shard's parkfrom after the call (>= the target). */
  readonly parkFrom: number;
}

/** Moves the tasks parked in `buckets` (all before `target`) into `delayed`; see unpark.lua. */
export async function unparkScript(client: RedisClient, shard: ShardKeys, target: number, buckets: readonly number[], limit: number): Promise<UnparkReply> {
  const keys = [shard.pool, shard.delayed, shard.parkFrom, shard.parked, shard.parkedCounts, ...buckets.map((b) => shard.park(b))];
  const reply = asArray(await run(client, 'unpark', keys, [target, limit, ...buckets]));
  return { taken: num(reply[0]), remaining: num(reply[1]), parkFrom: num(reply[2]) };
}

/** Makes sure the shard's parked counts say from which park bucket they count (parked-init.lua); returns that bucket. */
export async function parkedInitScript(client: RedisClient, shard: ShardKeys): Promise<number> {
  return num(await run(client, 'parked-init', [shard.parkedCounts, shard.parked], []));
}

/** Most entries one due-read call reads (its replies go through unpack in Lua: chunks of 400, as the other scripts). */
export const DUE_READ_CHUNK = 400;

/**
 * The members of `delayed` with score in [min, max) of one topic, `count` from `offset` on
 * (ZRANGEBYSCORE order): how many were read, the last score read, the scores of the topic's.
 */
export async function dueReadDelayedScript(
  client: RedisClient,
  shard: ShardKeys,
  min: number,
  max: number,
  offset: number,
  count: number,
  topic: string,
): Promise<{ read: number; last: number; runAts: number[] }> {
  const reply = asArray(await run(client, 'due-read', [shard.pool, shard.delayed], ['delayed', min, max, offset, count, `=${topic}`]));
  return { read: num(reply[0]), last: reply[1] === '' ? min : num(reply[1]), runAts: reply.slice(2).map(num) };
}

/** Entries [start, stop] of a park list: how many were read, and (id, runAt) of those still parked there (of the topic, if given). */
export async function dueReadParkedScript(
  client: RedisClient,
  shard: ShardKeys,
  bucket: number,
  start: number,
  stop: number,
  topic: string | undefined,
): Promise<{ read: number; parked: [id: string, runAt: number][] }> {
  const reply = asArray(await run(client, 'due-read', [shard.pool, shard.delayed, shard.park(bucket)], ['list', bucket, start, stop, topic === undefined ? '' : `=${topic}`]));
  const parked: [string, number][] = [];
  for (let i = 1; i + 1 < reply.length; i += 2) parked.push([str(reply[i]), num(reply[i + 1])]);
  return { read: num(reply[0]), parked };
}
