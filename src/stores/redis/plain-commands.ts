/**
 * Plain (non-script) commands of the store's parts: a Redis error becomes STORE_UNAVAILABLE,
 * as a script's does (script-runner.ts), and a write under waitReplicas goes in a pipeline with
 * WAIT (replication.ts), so it resolves only once the replicas have it.
 */
import type { ChainableCommander } from 'ioredis';
import { DelayQError } from '../../core/errors.js';
import { callErrorMessage, type RedisClient } from './connection.js';
import { execAndWait, waitSetting } from './replication.js';

export async function call<T>(command: () => Promise<T>): Promise<T> {
  try {
    return await command();
  } catch (error) {
    if (error instanceof DelayQError) throw error;
    throw new DelayQError('STORE_UNAVAILABLE', `redis: ${callErrorMessage(error)}`, {}, { cause: error });
  }
}

/** `command`, or under waitReplicas `queue` on a pipeline with WAIT, routed by `key`; `what` names it in a WAIT error. */
export async function write(client: RedisClient, what: string, key: string, command: () => Promise<unknown>, queue: (pipeline: ChainableCommander) => void): Promise<unknown> {
  const wait = waitSetting(client);
  if (wait === undefined) return call(command);
  return call(() => execAndWait(client, wait, what, key, queue));
}
