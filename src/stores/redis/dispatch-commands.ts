/**
 * The typed wrappers of the scripts of shared dispatch (several processes on one
 * namespace): promotion to the ready lists, reserving from them, giving kept tasks back,
 * and the shard leases.
 */
import type { RedisClient } from './connection.js';
import type { Keyspace, ShardKeys } from './keys.js';
import { asArray, num, pairs, run, standardKeys, type Arg } from './script-runner.js';

export interface PromoteArgs {
  readonly leaseValue: string;
  readonly now: number;
  readonly entries: readonly { id: string; topic: string }[];
  readonly channelOf: (topic: string) => string;
  /** The wakeup message ("<shard> <owner>"). */
  readonly message: string;
  /** How many due tasks of each topic to reserve at once for this process's consumers that are asking. */
  readonly reserveFor: (topic: string) => number;
  readonly nonce: string;
}

/**
 * Makes due pending ids available: reserved at once for local consumers that are asking (up to
 * reserveFor), the rest into their topic's ready list; only while this process holds the lease.
 */
export async function promoteScript(
  client: RedisClient,
  shard: ShardKeys,
  p: PromoteArgs,
): Promise<{ owned: boolean; pushed: Map<string, number>; ranked: Set<string>; reserved: [string, string][]; noticeRefused: boolean }> {
  const topics = [...new Set(p.entries.map((e) => e.topic))];
  const keys = [...standardKeys(shard), shard.lease, ...topics.map((t) => shard.ready(t)), ...topics.map((t) => shard.readyRanked(t)), shard.parked, shard.parkedCounts];
  const args: Arg[] = [p.leaseValue, p.now, p.message, topics.length, ...topics.map(p.channelOf), ...topics.map(p.reserveFor), p.nonce];
  for (const e of p.entries) args.push(e.id, topics.indexOf(e.topic) + 1);
  const reply = asArray(await run(client, 'promote', keys, args));
  const pushed = new Map<string, number>();
  const ranked = new Set<string>();
  // 1: done; 2: done, but the server refused a PUBLISH (promote.lua); else the lease is not ours.
  const status = num(reply[0]);
  if (status !== 1 && status !== 2) return { owned: false, pushed, ranked, reserved: [], noticeRefused: false };
  topics.forEach((topic, i) => {
    const n = num(reply[i + 1] ?? 0);
    if (n > 0) pushed.set(topic, n);
    if (num(reply[topics.length + i + 1] ?? 0) > 0) ranked.add(topic);
  });
  return { owned: true, pushed, ranked, reserved: pairs(reply.slice(2 * topics.length + 1)), noticeRefused: status === 2 };
}

/**
 * How long reserve-ready.lua keeps what a call reserved, for ioredis sending the same call again
 * after a reconnect: far longer than a reconnect to a reachable Redis (ioredis' first retry
 * is after 50 ms), short enough that a busy queue keeps few of these keys (3,000 calls a
 * second keep ~30,000, ~3 MB). A resend later than this finds nothing kept; what the
 * first run reserved then comes back when its ttr runs out (ADR 0013).
 */
export const RESERVE_MEMO_MS = 10_000;

/** Pops up to `max` ids from a topic's ready list and reserves those still pending and due. */
export async function reserveReadyScript(
  client: RedisClient,
  shard: ShardKeys,
  topic: string,
  now: number,
  max: number,
  ttrMs: number | undefined,
  nonce: string,
  holdBelowZero: boolean,
): Promise<{ reserved: [string, string][]; remaining: number; retryAt: number; rankedLeft: number; belowLeft: number }> {
  const keys = [...standardKeys(shard), shard.ready(topic), shard.reserveMemo(nonce), shard.parked, shard.parkedCounts, shard.readyRanked(topic)];
  const reply = asArray(await run(client, 'reserve-ready', keys, [now, ttrMs ?? '', nonce, max, RESERVE_MEMO_MS, holdBelowZero ? 1 : 0]));
  return { remaining: num(reply[0]), retryAt: num(reply[1]), rankedLeft: num(reply[2]), belowLeft: num(reply[3]), reserved: pairs(reply.slice(4)) };
}

/** Reserved -> pending (attempt not counted) and back into the topic's ready list; how many, and whether the server refused the PUBLISH. */
export async function releaseScript(
  client: RedisClient,
  shard: ShardKeys,
  topic: string,
  now: number,
  channel: string,
  message: string,
  records: readonly { id: string; receipt: string }[],
): Promise<{ released: number; noticeRefused: boolean }> {
  const keys = [...standardKeys(shard), shard.lease, shard.ready(topic), shard.readyRanked(topic)];
  const args: Arg[] = [now, channel, message];
  for (const r of records) args.push(r.id, r.receipt);
  const reply = asArray(await run(client, 'release', keys, args));
  return { released: num(reply[0]), noticeRefused: num(reply[1] ?? 0) === 1 };
}

/** SET NX PX plus a fencing counter: returns the lease value ("owner:fence") or null. */
export async function leaseAcquireScript(client: RedisClient, shard: ShardKeys, owner: string, ttlMs: number): Promise<string | null> {
  const reply = await run(client, 'lease-acquire', [shard.lease, shard.fence], [owner, ttlMs]);
  return typeof reply === 'string' && reply.length > 0 ? reply : null;
}

export async function leaseRenewScript(client: RedisClient, shard: ShardKeys, value: string, ttlMs: number): Promise<boolean> {
  return num(await run(client, 'lease-renew', [shard.lease], [value, ttlMs])) === 1;
}

export async function leaseReleaseScript(client: RedisClient, shard: ShardKeys, value: string): Promise<void> {
  await run(client, 'lease-release', [shard.lease], [value]);
}

/** This process's heartbeat (heartbeat.lua): the processes alive, and how many of the others joined before this one. */
export async function heartbeatScript(client: RedisClient, keys: Keyspace, owner: string, now: number, until: number): Promise<{ live: number; rank: number }> {
  const reply = asArray(await run(client, 'heartbeat', [keys.members, keys.joined], [owner, now, until]));
  return { live: num(reply[0]), rank: num(reply[1]) };
}
