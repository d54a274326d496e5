/**
 * `waitReplicas`: durable through a failover, by choice. Redis replicates asynchronously,
 * so a master that fails after answering a write may take it with it: the replica promoted
 * in its place never had it (Jepsen's finding for Redis). With `waitReplicas: n`, every
 * write the store makes is followed, in the same pipeline on the same connection, by
 * `WAIT n timeoutMs`, and the call resolves only once n replicas acknowledged it; fewer
 * within the timeout rejects with STORE_UNAVAILABLE rather than pretending.
 *
 * On a cluster the pipeline goes to the master that owns the script's keys (ioredis routes
 * a pipeline by the slot of its keyed commands; WAIT has no key and follows them), so WAIT
 * counts that shard's replicas.
 *
 * A rejection after the write reached the master does not undo it: the write may be there,
 * and may be lost if the master fails now. Every write of the store is safe to repeat
 * (schedule by id, acks are idempotent, cancel and reschedule answer by state), so the
 * caller retries. WAIT does not make Redis strongly consistent either (a replica that
 * acknowledged may still lose the write if it restarts without AOF): it closes the window
 * where a failover loses a write the master acknowledged.
 */
import type { ChainableCommander } from 'ioredis';
import { DelayQError } from '../../core/errors.js';
import { sendCoalesced, type RedisClient } from './connection.js';

export interface WaitReplicas {
  /** Replicas that must acknowledge each write; 0 = off (Redis' own asynchronous replication). */
  readonly replicas: number;
  /** How long a write waits for them before it rejects (WAIT's timeout; never 0, which waits forever). */
  readonly timeoutMs: number;
}

export const DEFAULT_WAIT_TIMEOUT_MS = 1_000;
export const MAX_WAIT_REPLICAS = 16;
export const MAX_WAIT_TIMEOUT_MS = 60_000;

const settings = new WeakMap<RedisClient, WaitReplicas>();

/** Every later write through `client` (script-runner.ts, plain-commands.ts) waits for replicas. */
export function requireReplicas(client: RedisClient, wait: WaitReplicas): void {
  if (wait.replicas > 0) settings.set(client, wait);
}

export function waitSetting(client: RedisClient): WaitReplicas | undefined {
  return settings.get(client);
}

/**
 * Runs the command(s) `add` queues, then WAIT, as one pipeline: answers the last queued
 * command's reply (or throws its error as it is, for the caller to map), and throws
 * STORE_UNAVAILABLE when fewer replicas than asked acknowledged within the timeout.
 */
export async function execAndWait(client: RedisClient, wait: WaitReplicas, what: string, add: (pipeline: ChainableCommander) => void): Promise<unknown> {
  const pipeline = client.pipeline();
  add(pipeline);
  pipeline.call('WAIT', wait.replicas, wait.timeoutMs);
  const results = await sendCoalesced(client, () => pipeline.exec());
  if (results === null || results.length < 2) throw new Error(`${what}: the pipeline was discarded`);
  for (let i = 0; i < results.length - 1; i++) {
    const [error] = results[i]!;
    if (error) throw error;
  }
  const [waitError, acknowledged] = results[results.length - 1]!;
  if (waitError) throw waitError;
  if (Number(acknowledged) < wait.replicas)
    throw new DelayQError(
      'STORE_UNAVAILABLE',
      `redis ${what}: written on the master, but ${Number(acknowledged)} of the ${wait.replicas} replicas asked for (waitReplicas) acknowledged it within ${wait.timeoutMs} ms; ` +
        'it may be lost if the master fails now: retry (every delayq write is safe to repeat)',
      { waitReplicas: wait.replicas, acknowledged: Number(acknowledged), waitTimeoutMs: wait.timeoutMs },
    );
  return results[results.length - 2]![1];
}
