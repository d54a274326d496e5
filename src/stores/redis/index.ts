/**
 * openRedisStore: the composition root of the Redis store. It connects, refuses a Redis
 * that may evict keys, checks (or records) the namespace's shard count, builds every part
 * of the store complete, in order, and starts the lease keeper. See docs/redis.md for URLs,
 * options, the data model and the guarantees.
 */
import { randomBytes } from 'node:crypto';
import { DelayQError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { Clock, Logger, TaskStore } from '../../core/ports/index.js';
import { redactUrl } from '../../core/redact.js';
import type { StoreOptions } from '../open-store.js';
import { parkedInitScript } from './parking-commands.js';
import { assertNoEviction, connect, parseRedisUrl, preloadScripts, type RedisClient, type UrlStoreOptions } from './connection.js';
import { ConsumerDemand } from '../../coordination/consumer-demand.js';
import { KeptTaskReleaser } from './kept-releaser.js';
import { buildKeyspace, type Keyspace } from './keys.js';
import { LeaseKeeper } from './lease-keeper.js';
import { OverdueRecoverer } from './overdue-recoverer.js';
import { Unparker } from './parking.js';
import { Promoter } from './promoter.js';
import { ReadyReserver } from './ready-reserver.js';
import { NoticeGuard } from '../../coordination/notices.js';
import { ReadyWaiters } from '../../coordination/ready-waiters.js';
import { RemoteTimers } from '../../coordination/remote-timers.js';
import { RankedShards } from './ranked-shards.js';
import { RefusedNotices } from './refused-notices.js';
import { RedisStore } from './redis-store.js';
import { redisTimerBackend } from './timer-backend.js';
import { requireReplicas, type WaitReplicas } from './replication.js';
import { scripts } from './scripts.js';
import { CALL_TIMEOUT_RULE, DEFAULT_CALL_TIMEOUT_MS, isCallTimeout } from '../shared/call-timeout.js';
import { agreedOption, intOption } from '../shared/store-options.js';
import { STORE_OPTIONS } from '../../core/option-table/index.js';
import { ShardHealth } from '../../coordination/shard-health.js';
import { ShardLeases } from '../../coordination/shard-leases.js';
import { ShardProbe } from './shard-probe.js';
import { ScheduleOwners } from '../../coordination/schedule-owners.js';
import { Subscriber } from './subscriber.js';

/** The Redis store's options: those of StoreOptions, with the clock given (openStore gives the system clock). */
export type RedisStoreOptions = Omit<StoreOptions, 'clock'> & { readonly clock: Clock };

export const DEFAULT_PREFIX: string = STORE_OPTIONS.prefix.default;
export const DEFAULT_SHARDS: number = STORE_OPTIONS.shards.default;
export const MAX_SHARDS: number = STORE_OPTIONS.shards.max;
/** How long a dead process keeps its shards (and so how late their tasks may fire). */
const LEASE_MS = 5_000;
/** While consumers wait, every shard is re-checked this often: the safety net for a lost PUBLISH. */
const SWEEP_MS = 2_000;
/**
 * Bumped when the stored format changes incompatibly. 2: far-future tasks may be parked
 * (parking.ts), which a version-1 process would never unpark. A version-1 namespace holds
 * nothing parked, so it is upgraded in place when opened. Not bumped for the push
 * subscriptions hash (keys.ts `push`): a key added beside the others, which a process
 * that does not know it never reads, so old and new processes can share a namespace
 * (the old ones just do not push: they leave a subscribed topic's tasks to pull consumers).
 */
export const FORMAT_VERSION = '2';
const UPGRADABLE_VERSIONS = new Set(['1']);
const PREFIX_PATTERN = /^[A-Za-z0-9._:-]{1,100}$/;

export async function openRedisStore(url: string, options: RedisStoreOptions): Promise<TaskStore> {
  const parsed = parseRedisUrl(url);
  const { prefix, shards, horizonMs, wait, callTimeoutMs } = resolveOptions(withUrlOptions(url, parsed.storeOptions, options));
  const logger = options.logger ?? silentLogger;
  const client = connect(parsed, callTimeoutMs);
  // ioredis reconnects by itself; with no listener it prints each error to the console.
  client.on('error', (error: unknown) => logger.warn({ err: error }, 'redis connection error; ioredis reconnects'));
  try {
    await client.ping();
    await assertNoEviction(client, logger);
    requireReplicas(client, wait);
    await preloadScripts(client, [...scripts().values()].map((script) => script.source));
    const keys = buildKeyspace(prefix, shards);
    await checkMeta(client, keys, shards);
    // Before anything changes a task: each shard's parked counts know which buckets they count.
    await Promise.all(keys.shards.map((shard) => parkedInitScript(client, shard)));
    return await build({ client, keys, horizonMs, description: `${parsed.cluster ? 'redis-cluster' : 'redis'}:${prefix}`, logger, clock: options.clock });
  } catch (error) {
    client.disconnect();
    if (error instanceof DelayQError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new DelayQError('STORE_UNAVAILABLE', `redis store "${redactUrl(url)}": ${message}`, {}, { cause: error });
  }
}

/** The options in the URL's query, and those given in code; the same one given both ways must agree. */
function withUrlOptions(url: string, fromUrl: UrlStoreOptions, given: RedisStoreOptions): RedisStoreOptions {
  const prefix = agreedOption('prefix', fromUrl.prefix, given.prefix, url);
  const shards = agreedOption('shards', fromUrl.shards, given.shards, url);
  const horizonMs = agreedOption('horizonMs', fromUrl.horizonMs, given.horizonMs, url);
  const waitReplicas = agreedOption('waitReplicas', fromUrl.waitReplicas, given.waitReplicas, url);
  const waitTimeoutMs = agreedOption('waitTimeoutMs', fromUrl.waitTimeoutMs, given.waitTimeoutMs, url);
  const callTimeoutMs = agreedOption('callTimeoutMs', fromUrl.callTimeoutMs, given.callTimeoutMs, url);
  return {
    ...given,
    ...(callTimeoutMs !== undefined ? { callTimeoutMs } : {}),
    ...(waitReplicas !== undefined ? { waitReplicas } : {}),
    ...(waitTimeoutMs !== undefined ? { waitTimeoutMs } : {}),
    ...(prefix !== undefined ? { prefix } : {}),
    ...(shards !== undefined ? { shards } : {}),
    ...(horizonMs !== undefined ? { horizonMs } : {}),
  };
}

export function resolveOptions(options: Omit<StoreOptions, 'clock'>): { prefix: string; shards: number; horizonMs: number; wait: WaitReplicas; callTimeoutMs: number } {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  if (!PREFIX_PATTERN.test(prefix))
    throw new DelayQError('INVALID_OPTION', 'prefix: 1 to 100 characters of [A-Za-z0-9._:-]', { field: 'prefix' });
  // Defaults and bounds: the options table (src/core/option-table/stores.ts).
  const shards = intOption('shards', options.shards);
  const horizonMs = intOption('horizonMs', options.horizonMs);
  const replicas = intOption('waitReplicas', options.waitReplicas);
  const timeoutMs = intOption('waitTimeoutMs', options.waitTimeoutMs);
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  if (!isCallTimeout(callTimeoutMs)) throw new DelayQError('INVALID_OPTION', `callTimeoutMs ${CALL_TIMEOUT_RULE}`, { field: 'callTimeoutMs' });
  // A WAIT holds its call for up to waitTimeoutMs: a shorter call timeout would fail every write.
  if (replicas > 0 && callTimeoutMs > 0 && callTimeoutMs <= timeoutMs)
    throw new DelayQError('INVALID_OPTION', `callTimeoutMs (${callTimeoutMs}) must exceed waitTimeoutMs (${timeoutMs}) under waitReplicas, better by a few times`, { field: 'callTimeoutMs' });
  return { prefix, shards, horizonMs, wait: { replicas, timeoutMs }, callTimeoutMs };
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

interface Setting {
  readonly client: RedisClient;
  readonly keys: Keyspace;
  readonly horizonMs: number;
  readonly description: string;
  readonly logger: Logger;
  readonly clock: Clock;
}

/**
 * Builds the store's parts in order, each complete, so that every part is given those it
 * calls: first the state they share (which shards this process holds, what its consumers
 * wait for and ask for, what it keeps for them), then the parts that read it, then the
 * subscriber (before the keeper, so no timer message for a shard we take is missed), and
 * last the lease keeper, whose first tick takes this process's share of the shards.
 */
async function build({ client, keys, horizonMs, description, logger, clock }: Setting): Promise<RedisStore> {
  const owner = randomBytes(6).toString('base64url');
  const leases = new ShardLeases(owner, (shard) => logger.debug({ shard, owner }, 'redis: gave up or lost a shard lease'));
  const planning = new ScheduleOwners(leases, keys.shards.length, LEASE_MS);
  const unparker = new Unparker(client, keys.shards);
  const waiters = new ReadyWaiters(keys.shards.length, SWEEP_MS, clock);
  const probe = new ShardProbe(client, keys, clock);
  const health = new ShardHealth(clock, logger, 'redis', (shard) => probe.probe(shard));
  const demand = new ConsumerDemand(clock);
  const ranked = new RankedShards();
  const refusedNotices = new RefusedNotices(logger, clock);
  const kept = new KeptTaskReleaser(client, keys, clock, owner, waiters, logger, ranked, refusedNotices);
  const promoter = new Promoter(client, keys, leases, demand, kept, waiters, health, ranked, refusedNotices);
  const guard = new NoticeGuard('redis', ['timers', 'ready'], logger, clock);
  const remoteTimers = new RemoteTimers({ backend: redisTimerBackend(client, keys, unparker), leases, clock, horizonMs, guard });
  const recoverer = new OverdueRecoverer(client, keys, clock, remoteTimers);
  const subscriber = await Subscriber.open(client, keys, guard, {
    // Our own promotions wake our consumers directly (promoter.ts).
    ready: (topic, shard, from, hasRanked) => {
      if (hasRanked) ranked.set(topic, shard, true);
      if (from !== owner) waiters.notify(topic, shard);
    },
    timers: (message) => remoteTimers.receive(message),
    // Messages sent while we were away are lost: re-check the lists and reload our timers.
    reconnected: () => {
      waiters.flagAll();
      ranked.clear();
      for (const shard of leases.owned()) void remoteTimers.loadShard(shard);
    },
  });
  const reserver = new ReadyReserver(client, keys, subscriber, waiters, demand, kept, health, logger, ranked);
  // A shard that takes writes again: its timers may have been skipped by loads meanwhile,
  // and its ready lists were left alone; reload the one, look at the other.
  health.onRecovered((shard) => {
    if (leases.owns(shard)) void remoteTimers.loadShard(shard);
    waiters.flagShard(shard);
  });
  // A tick fails every second while Redis is away: report the first failure and the recovery.
  let tickFailing = false;
  const keeper = new LeaseKeeper(client, keys, leases, LEASE_MS, clock, {
    acquired: (shard) => {
      logger.debug({ shard, owner }, 'redis: took a shard lease');
      void remoteTimers.loadShard(shard);
    },
    afterTick: (owned) => recoverer.recover(owned),
    healthy: () => {
      if (tickFailing) logger.info({ owner, shards: leases.size }, 'redis: lease ticks work again');
      tickFailing = false;
    },
    error: (error) => {
      if (!tickFailing) logger.error({ err: error, owner }, 'redis: a lease tick failed in part; a lease not renewed runs out unless a later tick renews it (retrying every tick)');
      tickFailing = true;
    },
  });
  try {
    await keeper.start();
  } catch (error) {
    health.stop();
    await probe.close();
    await subscriber.close();
    throw error;
  }
  return new RedisStore({ client, keys, description, horizonMs, logger, leases, unparker, subscriber, remoteTimers, guard, recoverer, kept, promoter, reserver, keeper, planning, health, probe });
}
