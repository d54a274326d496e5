/**
 * openRedisStore: the composition root of the Redis store. It connects, refuses a Redis
 * that may evict keys, checks (or records) the namespace's shard count, and returns the
 * store. See docs/redis.md for URLs, options, the data model and the guarantees.
 */
import { DelayQError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { Logger, TaskStore } from '../../core/ports.js';
import type { StoreOptions } from '../open-store.js';
import { assertNoEviction, connect, parseRedisUrl, preloadScripts, type RedisClient, type UrlStoreOptions } from './connection.js';
import { buildKeyspace, type Keyspace } from './keys.js';
import { LeaseKeeper } from './lease-keeper.js';
import { SharedRedisStore } from './shared-store.js';
import { Subscriber } from './subscriber.js';
import { scripts } from './scripts.js';
import { randomBytes } from 'node:crypto';

export const DEFAULT_PREFIX = 'delayq';
export const DEFAULT_SHARDS = 16;
export const MAX_SHARDS = 256;
const DEFAULT_HORIZON_MS = 60_000;
/** How long a dead process keeps its shards (and so how late their tasks may fire). */
const LEASE_MS = 5_000;
/**
 * Bumped when the stored format changes incompatibly. 2: far-future tasks may be parked
 * (parking.ts), which a version-1 process would never unpark. A version-1 namespace holds
 * nothing parked, so it is upgraded in place when opened.
 */
export const FORMAT_VERSION = '2';
const UPGRADABLE_VERSIONS = new Set(['1']);
const PREFIX_PATTERN = /^[A-Za-z0-9._:-]{1,100}$/;

export async function openRedisStore(url: string, options: StoreOptions): Promise<TaskStore> {
  const parsed = parseRedisUrl(url);
  const { prefix, shards, horizonMs } = resolveOptions(withUrlOptions(url, parsed.storeOptions, options));
  const logger = options.logger ?? silentLogger;
  const client = connect(parsed);
  // ioredis reconnects by itself; with no listener it prints each error to the console.
  client.on('error', (error: unknown) => logger.warn({ err: error }, 'redis connection error; ioredis reconnects'));
  try {
    await client.ping();
    await assertNoEviction(client);
    await preloadScripts(client, [...scripts().values()].map((script) => script.source));
    const keys = buildKeyspace(prefix, shards);
    await checkMeta(client, keys, shards);
    return await startShared(client, keys, horizonMs, `${parsed.cluster ? 'redis-cluster' : 'redis'}:${prefix}`, logger);
  } catch (error) {
    client.disconnect();
    if (error instanceof DelayQError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new DelayQError('STORE_UNAVAILABLE', `redis store "${url}": ${message}`, {}, { cause: error });
  }
}

/** The options in the URL's query, and those given in code; the same one given both ways must agree. */
function withUrlOptions(url: string, fromUrl: UrlStoreOptions, given: StoreOptions): StoreOptions {
  const agreed = <T>(name: keyof UrlStoreOptions, inUrl: T | undefined, inCode: T | undefined): T | undefined => {
    if (inUrl !== undefined && inCode !== undefined && inUrl !== inCode)
      throw new DelayQError('INVALID_OPTION', `${name}: the store URL says ${String(inUrl)}, the options say ${String(inCode)}`, { field: name, url });
    return inCode ?? inUrl;
  };
  const prefix = agreed('prefix', fromUrl.prefix, given.prefix);
  const shards = agreed('shards', fromUrl.shards, given.shards);
  const horizonMs = agreed('horizonMs', fromUrl.horizonMs, given.horizonMs);
  return {
    ...given,
    ...(prefix !== undefined ? { prefix } : {}),
    ...(shards !== undefined ? { shards } : {}),
    ...(horizonMs !== undefined ? { horizonMs } : {}),
  };
}

export function resolveOptions(options: StoreOptions): { prefix: string; shards: number; horizonMs: number } {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  if (!PREFIX_PATTERN.test(prefix))
    throw new DelayQError('INVALID_OPTION', 'prefix: 1 to 100 characters of [A-Za-z0-9._:-]', { field: 'prefix' });
  const shards = options.shards ?? DEFAULT_SHARDS;
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_SHARDS)
    throw new DelayQError('INVALID_OPTION', `shards: an integer from 1 to ${MAX_SHARDS}`, { field: 'shards' });
  const horizonMs = options.horizonMs ?? DEFAULT_HORIZON_MS;
  if (!(horizonMs > 0)) throw new DelayQError('INVALID_OPTION', 'horizonMs: a positive number of ms', { field: 'horizonMs' });
  return { prefix, shards, horizonMs };
}

/** The shard count is fixed per namespace: tasks are placed by hash(id) mod shards. */
async function checkMeta(client: RedisClient, keys: Keyspace, shards: number): Promise<void> {
  await client.hsetnx(keys.meta, 'shards', String(shards));
  await client.hsetnx(keys.meta, 'version', FORMAT_VERSION);
  const [storedShards, stored] = await client.hmget(keys.meta, 'shards', 'version');
  let version = stored;
  if (typeof version === 'string' && UPGRADABLE_VERSIONS.has(version)) {
    await client.hset(keys.meta, 'version', FORMAT_VERSION);
    version = FORMAT_VERSION;
  }
  if (version !== FORMAT_VERSION)
    throw new DelayQError('STORE_INCOMPATIBLE', `namespace "${keys.prefix}" has format version ${version ?? '?'}; this delayq reads ${FORMAT_VERSION}`);
  if (Number(storedShards) !== shards)
    throw new DelayQError(
      'STORE_INCOMPATIBLE',
      `namespace "${keys.prefix}" was created with ${storedShards ?? '?'} shards, not ${shards}; open it with shards: ${storedShards ?? '?'}`,
      { shards: Number(storedShards) },
    );
}

/**
 * Wires the shared store: subscriber first (so no timer message for a shard we take is
 * missed), then the lease keeper, whose first tick takes this process's share of shards.
 */
async function startShared(client: RedisClient, keys: Keyspace, horizonMs: number, description: string, logger: Logger): Promise<SharedRedisStore> {
  let keeper: LeaseKeeper | null = null;
  let subscriber: Subscriber | null = null;
  const store = new SharedRedisStore({
    client,
    keys,
    horizonMs,
    description,
    onClose: async () => {
      await keeper?.stop();
      await subscriber?.close();
    },
  });
  const now = (): number => Date.now();
  const owner = randomBytes(6).toString('base64url');
  subscriber = await Subscriber.open(client, keys, {
    // Our own promotions wake our consumers directly (shared-store.ts promote).
    ready: (topic, shard, from) => from !== owner && store.waiters.notify(topic, shard),
    timers: (message) => store.receiveTimers(message),
    // Messages sent while we were away are lost: re-check the lists and reload our timers.
    reconnected: () => {
      store.waiters.flagAll();
      for (const shard of keeper?.owned() ?? []) void store.loadShard(shard);
    },
  });
  // A tick fails every second while Redis is away: report the first failure and the recovery.
  let tickFailing = false;
  keeper = new LeaseKeeper(client, keys, owner, LEASE_MS, now, {
    acquired: (shard) => {
      logger.debug({ shard, owner }, 'redis: took a shard lease');
      void store.loadShard(shard);
    },
    lost: (shard) => logger.debug({ shard, owner }, 'redis: gave up or lost a shard lease'),
    afterTick: (owned) => {
      if (tickFailing) logger.info({ owner, shards: owned.length }, 'redis: lease ticks work again');
      tickFailing = false;
      return store.recoverOverdue(owned);
    },
    error: (error) => {
      if (!tickFailing) logger.error({ err: error, owner }, 'redis: a lease tick failed; held leases run out unless a later tick renews them (retrying every tick)');
      tickFailing = true;
    },
  });
  store.attach({ keeper, subscriber, now, logger });
  try {
    await keeper.start();
  } catch (error) {
    await subscriber.close();
    throw error;
  }
  return store;
}
