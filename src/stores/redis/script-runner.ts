/**
 * How the typed script wrappers call their scripts: EVALSHA with a fallback to EVAL on
 * NOSCRIPT (a restarted or failed-over Redis has an empty script cache), as ioredis' Script
 * does, but typed instead of dynamically added methods; under waitReplicas, writes in a
 * pipeline with WAIT. The wrappers, one per script and the only place that knows its KEYS /
 * ARGV layout and reply shape, are by role: commands.ts (tasks), parking-commands.ts,
 * dispatch-commands.ts (several processes, shard leases), schedule-commands.ts.
 */
import { DelayQError } from '../../core/errors.js';
import { callErrorMessage, sendCoalesced, type RedisClient } from './connection.js';
import type { ShardKeys } from './keys.js';
import { execAndWait, waitSetting, type WaitReplicas } from './replication.js';
import { scripts, type ScriptName } from './scripts.js';

export type Arg = string | number;

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
  'schedule', 'cancel', 'reschedule', 'reserve', 'ack', 'nack', 'expire', 'retry-dead', 'purge', 'purge-topic', 'unpark', 'promote', 'reserve-ready', 'release',
  'schedule-put', 'schedule-put-new', 'schedule-swap', 'schedule-delete',
]);

export async function run(client: RedisClient, name: ScriptName, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
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
    return await execAndWait(client, wait, name, keys[0] ?? '', (pipeline) => pipeline.evalsha(script.sha, keys.length, ...keys, ...args));
  } catch (error) {
    if (error instanceof DelayQError) throw error;
    if (error instanceof Error && error.message.startsWith('NOSCRIPT')) {
      try {
        return await execAndWait(client, wait, name, keys[0] ?? '', (pipeline) => pipeline.eval(script.source, keys.length, ...keys, ...args));
      } catch (inner) {
        if (inner instanceof DelayQError) throw inner;
        throw unavailable(name, inner);
      }
    }
    throw unavailable(name, error);
  }
}

function unavailable(name: string, error: unknown): DelayQError {
  return new DelayQError('STORE_UNAVAILABLE', `redis ${name} failed: ${callErrorMessage(error)}`, { script: name }, { cause: error });
}

/** The keys every task script starts with (codec.lua): pool, delayed, reserved, dead, done, counts. */
export function standardKeys(shard: ShardKeys): string[] {
  return [shard.pool, shard.delayed, shard.reserved, shard.dead, shard.done, shard.counts];
}

export const asArray = (reply: unknown): unknown[] => (Array.isArray(reply) ? reply : []);
export const num = (value: unknown): number => Number(value);
export const str = (value: unknown): string => (typeof value === 'string' ? value : String(value));

/** [id, body] pairs of a flat reply. */
export function pairs(reply: unknown[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < reply.length; i += 2) out.push([str(reply[i]), str(reply[i + 1])]);
  return out;
}

/** `items` in chunks of MAX_SCRIPT_BATCH, each one script call. */
export function chunked<T>(items: readonly T[]): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += MAX_SCRIPT_BATCH) chunks.push(items.slice(i, i + MAX_SCRIPT_BATCH));
  return chunks;
}
