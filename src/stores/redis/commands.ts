/**
 * One typed function per Lua script: the only place that knows each script's KEYS / ARGV
 * layout and reply shape. Each call is EVALSHA with a fallback to EVAL on NOSCRIPT (a
 * restarted or failed-over Redis has an empty script cache), as ioredis' Script does,
 * but typed instead of dynamically added methods.
 */
import { DelayQError } from '../../core/errors.js';
import type { CancelOutcome } from '../../core/ports/index.js';
import { DEFAULT_BACKOFF } from '../../core/task/backoff.js';
import { sendCoalesced, type RedisClient } from './connection.js';
import { execAndWait, waitSetting, type WaitReplicas } from './replication.js';
import type { ShardKeys } from './keys.js';
import { scripts, type ScriptName } from './scripts.js';

type Arg = string | number;

/** Most tasks or ids per script call: keeps each call short (Redis runs one script at a time). */
export const MAX_SCRIPT_BATCH = 500;

/**
 * Scripts whose writes wait for replicas under `waitReplicas` (replication.ts): every one
 * that writes, but load-due and due-read (read only), parked-init (a marker set at open, set
 * again by the next open if a failover lost it) and the shard leases (whose loss in a failover
 * costs a takeover, never a task: another process takes the shard and delivers its due
 * tasks, at least once).
 */
const WAITED: ReadonlySet<ScriptName> = new Set<ScriptName>([
  'schedule', 'cancel', 'reschedule', 'reserve', 'ack', 'nack', 'expire', 'retry-dead', 'purge', 'unpark', 'promote', 'reserve-ready', 'release',
  'schedule-put', 'schedule-put-new', 'schedule-swap', 'schedule-delete',
]);

async function run(client: RedisClient, name: ScriptName, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
  const wait = WAITED.has(name) ? waitSetting(client) : undefined;
  if (wait !== undefined) return runAndWait(client, name, keys, args, wait);
  const script = scripts().get(name)!;
  try {
    return await sendCoalesced(client, () => client.evalsha(script.sha, keys.length, ...keys, ...args));
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('NOSCRIPT')) {
      try {
        return await sendCoalesced(client, () => client.eval(script.source, keys.length, ...keys, ...args));
      } catch (inner) {
        throw unavailable(name, inner);
      }
    }
    throw unavailable(name, error);
  }
}

/** `run` under waitReplicas: the script and WAIT in one pipeline, EVAL when the script cache is empty. */
async function runAndWait(client: RedisClient, name: ScriptName, keys: readonly string[], args: readonly Arg[], wait: WaitReplicas): Promise<unknown> {
  const script = scripts().get(name)!;
  try {
    return await execAndWait(client, wait, name, (pipeline) => pipeline.evalsha(script.sha, keys.length, ...keys, ...args));
  } catch (error) {
    if (error instanceof DelayQError) throw error;
    if (error instanceof Error && error.message.startsWith('NOSCRIPT')) {
      try {
        return await execAndWait(client, wait, name, (pipeline) => pipeline.eval(script.source, keys.length, ...keys, ...args));
      } catch (inner) {
        if (inner instanceof DelayQError) throw inner;
        throw unavailable(name, inner);
      }
    }
    throw unavailable(name, error);
  }
}

function unavailable(name: string, error: unknown): DelayQError {
  const message = error instanceof Error ? error.message : String(error);
  return new DelayQError('STORE_UNAVAILABLE', `redis ${name} failed: ${message}`, { script: name }, { cause: error });
}

function standardKeys(shard: ShardKeys): string[] {
  return [shard.pool, shard.delayed, shard.reserved, shard.dead, shard.done, shard.counts];
}

const asArray = (reply: unknown): unknown[] => (Array.isArray(reply) ? reply : []);
const num = (value: unknown): number => Number(value);
const str = (value: unknown): string => (typeof value === 'string' ? value : String(value));

export interface ScheduleArgs {
  readonly id: string;
  readonly topic: string;
  /** laneOf(topic, url): what the task's timer refs carry. */
  readonly lane?: string;
  /** The packed body (codec.ts encodeNewTask). */
  readonly body: string;
  readonly runAt: number;
  readonly seq: number;
  /** The park bucket of runAt when the task is far enough ahead to be parked, else null. */
  readonly parkBucket: number | null;
}

export interface ScheduleReply {
  readonly created: boolean;
  /** Created now, or already there pending on the same topic: its timer belongs in a wheel. */
  readonly pending: boolean;
  readonly runAt: number;
  readonly seq: number;
}

export async function scheduleScript(
  client: RedisClient,
  shard: ShardKeys,
  now: number,
  tasks: readonly ScheduleArgs[],
  initialParkFrom: number,
): Promise<ScheduleReply[]> {
  // The park lists this call may write: one KEY per distinct bucket, referred to by index.
  const parkIndex = new Map<number, number>();
  for (const t of tasks) if (t.parkBucket !== null && !parkIndex.has(t.parkBucket)) parkIndex.set(t.parkBucket, parkIndex.size + 1);
  const keys = [...standardKeys(shard), shard.parkFrom, shard.parked, shard.parkedCounts];
  const args: Arg[] = [now, initialParkFrom, parkIndex.size];
  for (const bucket of parkIndex.keys()) {
    keys.push(shard.park(bucket));
    args.push(bucket);
  }
  for (const t of tasks) args.push(t.id, t.body, t.runAt, t.seq, t.topic, t.parkBucket === null ? 0 : parkIndex.get(t.parkBucket)!);
  const reply = asArray(await run(client, 'schedule', keys, args));
  const out: ScheduleReply[] = [];
  let at = 0;
  for (const t of tasks) {
    if (num(reply[at]) === 1) {
      out.push({ created: true, pending: true, runAt: t.runAt, seq: t.seq });
      at += 1;
    } else {
      out.push({ created: false, pending: num(reply[at]) === 2, runAt: num(reply[at + 1]), seq: num(reply[at + 2]) });
      at += 3;
    }
  }
  return out;
}

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

const CANCEL_OUTCOMES: Readonly<Record<string, CancelOutcome>> = { c: 'cancelled', n: 'not_found', p: 'not_pending' };

/** Outcomes per id, in order (cancel.lua answers one character each). */
export async function cancelScript(
  client: RedisClient,
  shard: ShardKeys,
  now: number,
  ids: readonly string[],
): Promise<CancelOutcome[]> {
  const codes = str(await run(client, 'cancel', [...standardKeys(shard), shard.parked, shard.parkedCounts], [now, ...ids]));
  const out = new Array<CancelOutcome>(codes.length);
  for (let i = 0; i < codes.length; i++) out[i] = CANCEL_OUTCOMES[codes[i]!]!;
  return out;
}

/** Outcomes per (id, receipt), in order. */
export async function ackScript(client: RedisClient, shard: ShardKeys, now: number, acks: readonly { id: string; receipt: string }[]): Promise<string[]> {
  const args: Arg[] = [now];
  for (const a of acks) args.push(a.id, a.receipt);
  return asArray(await run(client, 'ack', standardKeys(shard), args)).map(str);
}

/** Replies of the form { status, runAt?, seq?, topic? }. */
export interface MoveReply {
  readonly status: string;
  readonly runAt: number;
  readonly seq: number;
  readonly topic: string;
}

function moveReply(reply: unknown): MoveReply {
  const [status, runAt, seq, topic] = asArray(reply);
  return { status: str(status), runAt: num(runAt ?? 0), seq: num(seq ?? 0), topic: topic === undefined ? '' : str(topic) };
}

export async function rescheduleScript(client: RedisClient, shard: ShardKeys, now: number, id: string, runAt: number): Promise<MoveReply> {
  return moveReply(await run(client, 'reschedule', [...standardKeys(shard), shard.parkedCounts], [now, id, runAt]));
}

export async function cancelDeadScript(client: RedisClient, shard: ShardKeys, now: number, id: string): Promise<string> {
  return str(await run(client, 'cancel-dead', standardKeys(shard), [now, id]));
}

export async function retryDeadScript(client: RedisClient, shard: ShardKeys, now: number, id: string, runAt: number): Promise<MoveReply> {
  return moveReply(await run(client, 'retry-dead', standardKeys(shard), [now, id, runAt]));
}

export interface NackArgs {
  readonly delayMs: number | undefined;
  readonly random: number;
  readonly error: string | null;
}

export async function nackScript(client: RedisClient, shard: ShardKeys, now: number, id: string, receipt: string, options: NackArgs): Promise<MoveReply> {
  const d = DEFAULT_BACKOFF;
  const fallback = `${d.baseMs.toString(36)}:${d.factor}:${d.maxMs.toString(36)}:${d.jitter}`;
  const args: Arg[] = [now, id, receipt, options.delayMs ?? '', options.random, options.error === null ? '0' : '1', options.error ?? '', fallback];
  return moveReply(await run(client, 'nack', standardKeys(shard), args));
}

export async function deferScript(client: RedisClient, shard: ShardKeys, now: number, id: string, receipt: string, runAt: number): Promise<MoveReply> {
  return moveReply(await run(client, 'defer', standardKeys(shard), [now, id, receipt, runAt]));
}

export async function expireScript(client: RedisClient, shard: ShardKeys, now: number, id: string, receipt: string): Promise<MoveReply> {
  return moveReply(await run(client, 'expire', standardKeys(shard), [now, id, receipt]));
}

/** Reserved tasks as [id, packed body] pairs. */
export async function reserveScript(
  client: RedisClient,
  shard: ShardKeys,
  now: number,
  ids: readonly string[],
  ttrMs: number | undefined,
  nonce: string,
): Promise<[string, string][]> {
  const reply = asArray(await run(client, 'reserve', [...standardKeys(shard), shard.parked, shard.parkedCounts], [now, ttrMs ?? '', nonce, ...ids]));
  return pairs(reply);
}

function pairs(reply: unknown[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < reply.length; i += 2) out.push([str(reply[i]), str(reply[i + 1])]);
  return out;
}

export async function purgeScript(client: RedisClient, shard: ShardKeys, before: number, limit: number): Promise<number> {
  return num(await run(client, 'purge', standardKeys(shard), [before, limit]));
}

export interface DueEntry {
  readonly id: string;
  readonly kind: 'run' | 'ttr';
  readonly dueAt: number;
  readonly seq: number;
  readonly topic: string;
  readonly receipt: string | null;
}

export async function loadDueScript(
  client: RedisClient,
  shard: ShardKeys,
  until: number,
  after: { dueAt: number; seq: number } | null,
  limit: number,
  only: 'all' | 'ttr' = 'all',
): Promise<DueEntry[]> {
  const args: Arg[] = [Number.isFinite(until) ? until : '+inf', after ? after.dueAt : '', after ? after.seq : 0, limit, only];
  const reply = asArray(await run(client, 'load-due', [shard.pool, shard.delayed, shard.reserved], args));
  const out: DueEntry[] = [];
  for (let i = 0; i < reply.length; i += 6) {
    const receipt = str(reply[i + 5]);
    out.push({
      id: str(reply[i]),
      kind: reply[i + 1] === 'ttr' ? 'ttr' : 'run',
      dueAt: num(reply[i + 2]),
      seq: num(reply[i + 3]),
      topic: str(reply[i + 4]),
      receipt: receipt === '' ? null : receipt,
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Shared dispatch (several processes) and shard leases

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
): Promise<{ owned: boolean; pushed: Map<string, number>; reserved: [string, string][] }> {
  const topics = [...new Set(p.entries.map((e) => e.topic))];
  const keys = [...standardKeys(shard), shard.lease, ...topics.map((t) => shard.ready(t)), shard.parked, shard.parkedCounts];
  const args: Arg[] = [p.leaseValue, p.now, p.message, topics.length, ...topics.map(p.channelOf), ...topics.map(p.reserveFor), p.nonce];
  for (const e of p.entries) args.push(e.id, topics.indexOf(e.topic) + 1);
  const reply = asArray(await run(client, 'promote', keys, args));
  const pushed = new Map<string, number>();
  if (num(reply[0]) !== 1) return { owned: false, pushed, reserved: [] };
  topics.forEach((topic, i) => {
    const n = num(reply[i + 1] ?? 0);
    if (n > 0) pushed.set(topic, n);
  });
  return { owned: true, pushed, reserved: pairs(reply.slice(topics.length + 1)) };
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
): Promise<{ reserved: [string, string][]; remaining: number; retryAt: number }> {
  const keys = [...standardKeys(shard), shard.ready(topic), shard.reserveMemo(nonce), shard.parked, shard.parkedCounts];
  const reply = asArray(await run(client, 'reserve-ready', keys, [now, ttrMs ?? '', nonce, max, RESERVE_MEMO_MS]));
  return { remaining: num(reply[0]), retryAt: num(reply[1]), reserved: pairs(reply.slice(2)) };
}

/** Reserved -> pending (attempt not counted) and back into the topic's ready list. */
export async function releaseScript(
  client: RedisClient,
  shard: ShardKeys,
  topic: string,
  now: number,
  channel: string,
  message: string,
  records: readonly { id: string; receipt: string }[],
): Promise<number> {
  const keys = [...standardKeys(shard), shard.lease, shard.ready(topic)];
  const args: Arg[] = [now, channel, message];
  for (const r of records) args.push(r.id, r.receipt);
  return num(await run(client, 'release', keys, args));
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

type ScheduleKeys = { readonly schedules: string; readonly schedulesVersion: string };

/** ScheduleStore.putSchedules: each (id, text) stored, replacing any; one version bump per chunk. */
export async function putSchedulesScript(client: RedisClient, keys: ScheduleKeys, records: readonly (readonly [id: string, text: string])[]): Promise<void> {
  await Promise.all(chunked(records).map((chunk) => run(client, 'schedule-put', [keys.schedules, keys.schedulesVersion], chunk.flat())));
}

/** ScheduleStore.deleteSchedule: true if there was one. */
export async function deleteScheduleScript(client: RedisClient, keys: ScheduleKeys, id: string): Promise<boolean> {
  return Number(await run(client, 'schedule-delete', [keys.schedules, keys.schedulesVersion], [id])) === 1;
}

/** ScheduleStore.putNewSchedules: each (id, text) stored unless the id has one; '' if stored, else the stored text. */
export async function putNewSchedulesScript(
  client: RedisClient,
  keys: ScheduleKeys,
  records: readonly (readonly [id: string, text: string])[],
): Promise<string[]> {
  // Every chunk sent at once: Redis runs the first while the next is encoded.
  const replies = await Promise.all(
    chunked(records).map((chunk) => run(client, 'schedule-put-new', [keys.schedules, keys.schedulesVersion], chunk.flat())),
  );
  return replies.flatMap((reply) => (reply as unknown[]).map(String));
}

/**
 * ScheduleStore.swapSchedules: each (id, expected text, next text) replaced only if still
 * expected; `versionKey` is bumped when `changesDefinitions` and any of them was replaced.
 */
export async function swapScheduleScript(
  client: RedisClient,
  keys: ScheduleKeys,
  changesDefinitions: boolean,
  swaps: readonly (readonly [id: string, expected: string, next: string])[],
): Promise<boolean[]> {
  const replies = await Promise.all(
    chunked(swaps).map((chunk) => run(client, 'schedule-swap', [keys.schedules, keys.schedulesVersion], [changesDefinitions ? '1' : '0', ...chunk.flat()])),
  );
  // One character per triple of its chunk: '1' replaced.
  return replies.flatMap((reply) => [...str(reply)].map((c) => c === '1'));
}

/** `items` in chunks of MAX_SCRIPT_BATCH, each one script call. */
function chunked<T>(items: readonly T[]): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += MAX_SCRIPT_BATCH) chunks.push(items.slice(i, i + MAX_SCRIPT_BATCH));
  return chunks;
}
