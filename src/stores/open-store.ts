/**
 * Opens a store from a URL-like spec, by the registry of kinds (kinds.ts). Each kind is
 * imported on demand, so a process that uses the memory store never loads better-sqlite3
 * or ioredis.
 *
 *   memory                               in-process, nothing survives
 *   sqlite:./path/to/file.db             durable, embedded (the server's default)
 *   redis://host:port[/db]               one Redis
 *   redis+cluster://host:port,host:port  a Redis Cluster
 *   (either with ?prefix=ns&shards=16&horizonMs=60000: the Redis options below, by URL)
 *   postgres://user@host:5432/db?schema=delayq   PostgreSQL (also postgresql://), one schema per queue
 */
import { DelayQError } from '../core/errors.js';
import type { Clock, Logger, TaskStore } from '../core/ports/index.js';
import { redactUrl } from '../core/redact.js';
import { storeKindOf, storeUsages, type StoreKindName } from './kinds.js';
import { checkStoreOptions } from './shared/store-options.js';
import { storeSystemClock } from './system-clock.js';

/**
 * Options for stores opened by spec, each read by the kinds its row of the options table
 * names (docs/options.md): one given to a kind that does not read it is INVALID_OPTION.
 */
export interface StoreOptions {
  /** Disk and Redis stores: keep tasks due within this many ms in memory. Default 60 s. */
  horizonMs?: number;
  /** SQLite: 'NORMAL' (default: loses nothing on a process crash) or 'FULL' (nothing on power loss). */
  synchronous?: 'NORMAL' | 'FULL';
  /** PostgreSQL: the schema holding the queue's tables (also `?schema=` in the URL). Default 'delayq'. */
  schema?: string;
  /**
   * PostgreSQL: 'auto' (default) applies the migrations a schema lacks when the store opens;
   * 'never' refuses to open a schema not at this build's version (SCHEMA_OUTDATED), for a
   * runtime role whose schema a DBA migrates (`delayq migrate`). Also `?migrate=` in the URL.
   */
  migrate?: 'auto' | 'never';
  /**
   * PostgreSQL: the URL of the LISTEN connection when the store URL goes through a
   * transaction pooler such as pgbouncer, which cannot carry LISTEN: a direct connection to
   * the same database (also `?listenUrl=`, URL-encoded). docs/postgres.md, "pgbouncer".
   */
  listenUrl?: string;
  /** PostgreSQL: connections of the process's pool, 1 to 100. Default 4 (also `?poolSize=`). */
  poolSize?: number;
  /** Redis: key namespace. Default 'delayq'. */
  prefix?: string;
  /** Redis: shards per namespace. Default 16. */
  shards?: number;
  /**
   * Redis: every write resolves only once this many replicas (of the shard's master, on a
   * cluster) acknowledged it (`WAIT`), so a failover cannot lose it; fewer within
   * `waitTimeoutMs` rejects with STORE_UNAVAILABLE. Default 0: Redis' asynchronous
   * replication, where a failover may lose the last writes the master acknowledged. docs/redis.md.
   */
  waitReplicas?: number;
  /** Redis: how long a write waits for `waitReplicas` replicas. Default 1,000 ms. */
  waitTimeoutMs?: number;
  /**
   * Redis and PostgreSQL: a call the server leaves unanswered this long fails with
   * STORE_UNAVAILABLE instead of waiting for TCP to give up (also `?callTimeoutMs=` in the
   * URL). 0: no limit; else 100 to 3,600,000. Default 10,000. On Redis it must exceed
   * `waitTimeoutMs` when `waitReplicas` is on.
   */
  callTimeoutMs?: number;
  /**
   * Where a store reports failures of its background work (SQLite: checkpoints, unparking;
   * Redis: lease ticks, returning kept tasks), which no caller awaits. `DelayQueue.open`
   * passes its own logger when none is given here. Default: silent.
   */
  logger?: Logger;
  /**
   * The time and timers of a store's background work (flushes, checkpoints, lease ticks,
   * kept-task release): a store never reads a clock of its own. Default: the system clock,
   * also under `DelayQueue.open` with a clock of its own (see its `storeOptions`).
   */
  clock?: Clock;
}

type StoreLoader = (spec: string, options: StoreOptions) => Promise<TaskStore>;

/** Where a store's schema stands against this build's migrations (`delayq migrate --status`). */
export interface MigrationReport {
  /** The schema (PostgreSQL) the report is of. */
  readonly schema: string;
  /** False when it is missing: the first migration creates it. */
  readonly exists: boolean;
  /** Migrations applied: 0 for a missing or empty schema. */
  readonly version: number;
  /** The number of the last migration this build has. */
  readonly latest: number;
  /** Names of the migrations applied and pending, in order (e.g. `0009_default_nulls`). */
  readonly applied: readonly string[];
  readonly pending: readonly string[];
}

/**
 * A store's migrations as a step of their own, apart from opening it (`delayq migrate`): for a
 * DBA who reviews the SQL or applies it with a role the running processes do not have.
 */
export interface StoreMigrator {
  status(): Promise<MigrationReport>;
  /** The SQL `apply` would run, as one transaction a DBA can run with psql; empty when current. */
  script(): Promise<string>;
  /** Applies the pending migrations; `from` is the version before. */
  apply(): Promise<MigrationReport & { readonly from: number }>;
  close(): Promise<void>;
}

/**
 * The migrator of a store URL. Only PostgreSQL schemas migrate apart: SQLite files and Redis
 * namespaces are migrated by the process that opens them.
 */
export async function openMigrator(spec: string, options: Pick<StoreOptions, 'schema'> = {}): Promise<StoreMigrator> {
  const kind = storeKindOf(spec);
  if (kind === undefined) throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": unknown kind; use ${storeUsages()}`);
  if (kind.name !== 'postgres')
    throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": only a PostgreSQL schema is migrated apart; a ${kind.name} store is migrated by the process that opens it`);
  const { openPostgresMigrator } = await import('./postgres/migrator.js').catch(driverMissing(spec, 'pg'));
  return openPostgresMigrator(spec, options);
}

/** How each kind of the registry (kinds.ts) opens: a kind without a loader does not compile. */
const LOADERS: Readonly<Record<StoreKindName, StoreLoader>> = {
  memory: async () => {
    const { MemoryStore } = await import('./memory/memory-store.js');
    return new MemoryStore();
  },
  sqlite: async (spec, options) => {
    const path = spec.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path.length === 0) throw new DelayQError('INVALID_STORE_URL', `store "${spec}": give a file path, e.g. sqlite:./delayq.db`);
    const { openSqliteStore } = await import('./sqlite/index.js').catch(driverMissing(spec, 'better-sqlite3'));
    return openSqliteStore(path, { ...options, clock: options.clock ?? storeSystemClock });
  },
  redis: async (spec, options) => {
    const { openRedisStore } = await import('./redis/index.js').catch(driverMissing(spec, 'ioredis'));
    return openRedisStore(spec, { ...options, clock: options.clock ?? storeSystemClock });
  },
  postgres: async (spec, options) => {
    const { openPostgresStore } = await import('./postgres/index.js').catch(driverMissing(spec, 'pg'));
    return openPostgresStore(spec, { ...options, clock: options.clock ?? storeSystemClock });
  },
};

export async function openStore(spec: string, options: StoreOptions = {}): Promise<TaskStore> {
  const kind = storeKindOf(spec);
  if (kind === undefined) throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": unknown kind; use ${storeUsages()}`);
  // An option this kind does not read is an error, not ignored (docs/options.md).
  checkStoreOptions(kind.name, options, `store "${redactUrl(spec)}"`);
  return LOADERS[kind.name](spec, options);
}

/** A store's driver may be left out (better-sqlite3 is optional: docs/adr/0002-store-drivers.md): say which to install. */
function driverMissing(spec: string, driver: string): (error: unknown) => never {
  return (error) => {
    const code = (error as { code?: unknown } | null)?.code;
    if (code !== 'ERR_MODULE_NOT_FOUND' || !String((error as Error).message).includes(`'${driver}'`)) throw error;
    throw new DelayQError('STORE_UNAVAILABLE', `store "${spec}" needs the ${driver} package, which is not installed: npm install ${driver}`, { driver }, { cause: error });
  };
}
