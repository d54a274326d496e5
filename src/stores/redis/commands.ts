/**
 * The typed wrappers of the task scripts: one function per Lua script, the only place that
 * knows its KEYS / ARGV layout and reply shape (script-runner.ts runs them).
 */
import { own } from '../../core/dict.js';
import { historyError } from '../../core/task/history.js';
import type { ExtendOutcome, ExtendRequest, QuarantineRequest, StoreAckOutcome, StoreCancelOutcome, FlowLease } from '../../core/ports/index.js';
import { DEFAULT_BACKOFF } from '../../core/task/backoff.js';
import type { RedisClient } from './connection.js';
import type { ShardKeys } from './keys.js';
import { asArray, num, pairs, run, standardKeys, str, type Arg } from './script-runner.js';

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

const CANCEL_FAILURES: Readonly<Record<string, StoreCancelOutcome>> = { n: { status: 'not_found' }, p: { status: 'not_pending' } };

/** Outcomes per id, in order (cancel.lua answers one character each, then the topic of each cancelled one). */
export async function cancelScript(
  client: RedisClient,
  shard: ShardKeys,
  now: number,
  ids: readonly string[],
): Promise<StoreCancelOutcome[]> {
  const reply = asArray(await run(client, 'cancel', [...standardKeys(shard), shard.parked, shard.parkedCounts], [now, ...ids]));
  const codes = str(reply[0]);
  const out = new Array<StoreCancelOutcome>(codes.length);
  let topics = 1;
  for (let i = 0; i < codes.length; i++) out[i] = codes[i] === 'c' ? { status: 'cancelled', topic: str(reply[topics++]) } : own(CANCEL_FAILURES, codes[i]!)!;
  return out;
}

const ACK_FAILURES: Readonly<Record<string, StoreAckOutcome>> = { r: { status: 'already_acked' }, n: { status: 'not_found' }, s: { status: 'stale' } };

/** Outcomes per (id, receipt), in order (ack.lua answers one character each, then the topic of each acked one). */
export async function ackScript(client: RedisClient, shard: ShardKeys, now: number, acks: readonly { id: string; receipt: string }[]): Promise<StoreAckOutcome[]> {
  const args: Arg[] = [now];
  for (const a of acks) args.push(a.id, a.receipt);
  const reply = asArray(await run(client, 'ack', standardKeys(shard), args));
  const codes = str(reply[0]);
  const out = new Array<StoreAckOutcome>(codes.length);
  let topics = 1;
  for (let i = 0; i < codes.length; i++) out[i] = codes[i] === 'a' ? { status: 'acked', topic: str(reply[topics++]) } : own(ACK_FAILURES, codes[i]!)!;
  return out;
}

/** Replies of the form { status, runAt?, seq?, topic?, taskTopic? }. */
export interface MoveReply {
  readonly status: string;
  readonly runAt: number;
  readonly seq: number;
  /** The timer's topic: the task's lane (laneOf). */
  readonly topic: string;
  /** The task's own topic, where the script answers it (nack, expire). */
  readonly taskTopic: string;
}

function moveReply(reply: unknown): MoveReply {
  const [status, runAt, seq, topic, taskTopic] = asArray(reply);
  return { status: str(status), runAt: num(runAt ?? 0), seq: num(seq ?? 0), topic: topic === undefined ? '' : str(topic), taskTopic: taskTopic === undefined ? '' : str(taskTopic) };
}

export async function rescheduleScript(client: RedisClient, shard: ShardKeys, now: number, id: string, runAt: number): Promise<MoveReply> {
  return moveReply(await run(client, 'reschedule', [...standardKeys(shard), shard.parkedCounts], [now, id, runAt]));
}

export async function cancelDeadScript(client: RedisClient, shard: ShardKeys, now: number, id: string): Promise<string> {
  return str(await run(client, 'cancel-dead', standardKeys(shard), [now, id]));
}

/** Tasks the engine cannot read, of one shard, to dead (quarantine.lua). */
export async function quarantineScript(client: RedisClient, shard: ShardKeys, now: number, tasks: readonly QuarantineRequest[]): Promise<number> {
  const args: Arg[] = [now];
  for (const { id, receipt, error } of tasks) args.push(id, receipt ?? '', error);
  return Number(await run(client, 'quarantine', [...standardKeys(shard), shard.parkedCounts], args));
}

export async function retryDeadScript(client: RedisClient, shard: ShardKeys, now: number, id: string, runAt: number): Promise<MoveReply> {
  return moveReply(await run(client, 'retry-dead', standardKeys(shard), [now, id, runAt]));
}

export interface NackArgs {
  readonly delayMs: number | undefined;
  readonly random: number;
  readonly error: string | null;
  /** The history entry's outcome ('nacked', 'push:5xx'...). */
  readonly outcome: string;
}

export async function nackScript(client: RedisClient, shard: ShardKeys, now: number, id: string, receipt: string, options: NackArgs): Promise<MoveReply> {
  const d = DEFAULT_BACKOFF;
  const fallback = `${d.baseMs.toString(36)}:${d.factor}:${d.maxMs.toString(36)}:${d.jitter}`;
  // The entry keeps the error's first HISTORY_ERROR_LIMIT characters: their bytes, for Lua.
  const kept = Buffer.byteLength(historyError(options.error) ?? '');
  const args: Arg[] = [now, id, receipt, options.delayMs ?? '', options.random, options.error === null ? '0' : '1', options.error ?? '', fallback, options.outcome, kept];
  return moveReply(await run(client, 'nack', standardKeys(shard), args));
}

export async function deferScript(client: RedisClient, shard: ShardKeys, now: number, id: string, receipt: string, runAt: number): Promise<MoveReply> {
  return moveReply(await run(client, 'defer', standardKeys(shard), [now, id, receipt, runAt]));
}

export async function expireScript(client: RedisClient, shard: ShardKeys, now: number, id: string, receipt: string): Promise<MoveReply> {
  return moveReply(await run(client, 'expire', standardKeys(shard), [now, id, receipt]));
}

/** Outcomes per request, in order (extend.lua answers one character each, then the new reservedUntil of each extended one). */
export async function extendScript(client: RedisClient, shard: ShardKeys, now: number, requests: readonly ExtendRequest[]): Promise<ExtendOutcome[]> {
  const args: Arg[] = [now];
  for (const r of requests) args.push(r.id, r.receipt, r.ttrMs ?? '');
  const reply = asArray(await run(client, 'extend', standardKeys(shard), args));
  const codes = str(reply[0]);
  const out = new Array<ExtendOutcome>(codes.length);
  let next = 1;
  for (let i = 0; i < codes.length; i++) out[i] = codes[i] === 'e' ? { status: 'extended', reservedUntil: num(reply[next++]) } : { status: codes[i] === 'n' ? 'not_found' : 'stale' };
  return out;
}

/** The reservations of `topic` in force in this shard, ending in (now, until]. */
export async function reservedOfScript(client: RedisClient, shard: ShardKeys, now: number, until: number, topic: string): Promise<FlowLease[]> {
  const reply = asArray(await run(client, 'reserved-of', standardKeys(shard), [now, until, topic]));
  const out: FlowLease[] = [];
  for (let i = 0; i + 1 < reply.length; i += 2) out.push({ key: str(reply[i]), until: num(reply[i + 1]) });
  return out;
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

export async function purgeScript(client: RedisClient, shard: ShardKeys, before: number, limit: number): Promise<number> {
  return num(await run(client, 'purge', standardKeys(shard), [before, limit]));
}

/** One HSCAN step of a topic purge on one shard: the next cursor ('0': done) and the tasks deleted. */
export async function purgeTopicScript(
  client: RedisClient,
  shard: ShardKeys,
  cursor: string,
  limit: number,
  topic: string,
  states: string,
): Promise<{ next: string; deleted: { id: string; seq: number; runAt: number; lane: string }[] }> {
  const reply = asArray(await run(client, 'purge-topic', [...standardKeys(shard), shard.parkedCounts], [cursor, limit, topic, states]));
  const deleted = [];
  for (let i = 1; i + 3 < reply.length + 1; i += 4) deleted.push({ id: str(reply[i]), seq: num(reply[i + 1]), runAt: num(reply[i + 2]), lane: str(reply[i + 3]) });
  return { next: str(reply[0]), deleted };
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
  only: 'all' | 'ttr' | 'run' = 'all',
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
