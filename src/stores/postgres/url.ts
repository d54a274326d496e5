/**
 * The PostgreSQL store URL: `postgres://user[:password]@host[:port]/database[?options]`
 * (also `postgresql://`). The query holds delayq's options and the few connection ones it
 * passes to the driver; anything else is refused (INVALID_STORE_URL), so a typo never
 * silently opens another schema.
 *
 *   postgres://app@db.internal:5432/orders?schema=delayq_orders&horizonMs=60000&callTimeoutMs=15000
 *   postgres://app@pgbouncer:6432/orders?poolSize=8&listenUrl=postgres%3A%2F%2Fapp%40db.internal%3A5432%2Forders
 *
 * `listenUrl` (URL-encoded) is where the LISTEN connection goes when the pool goes through a
 * transaction pooler, which cannot carry LISTEN (docs/postgres.md, "pgbouncer").
 */
import { DelayQError } from '../../core/errors.js';
import { redactUrl } from '../../core/redact.js';
import { STORE_OPTIONS } from '../../core/option-table/index.js';
import { CALL_TIMEOUT_RULE, isCallTimeout } from '../shared/call-timeout.js';
import { unknownParameter, urlParameters } from '../shared/store-options.js';
import type { MigrateMode } from './schema.js';

export const DEFAULT_SCHEMA: string = STORE_OPTIONS.schema.default;
/**
 * A plain lower-case identifier: never needs quoting in hand-written SQL (`delayq.schedule(...)`),
 * and short enough for the notification channels named after it (channels.ts).
 */
const SCHEMA_PATTERN = /^(?!pg_)[a-z_][a-z0-9_]{0,47}$/;
/** Passed to the driver as they are. */
const DRIVER_PARAMETERS = new Set(['sslmode', 'application_name', 'connect_timeout']);
/** delayq's own: the options table's PostgreSQL options with a URL parameter (src/core/option-table/stores.ts). */
const OWN_PARAMETERS: ReadonlySet<string> = new Set(urlParameters('postgres').keys());
const MIGRATE_MODES: ReadonlySet<string> = new Set<string>(STORE_OPTIONS.migrate.values);
/** Connections of a process's pool: the default carries every call (writes go through the batchers). */
export const DEFAULT_POOL_SIZE: number = STORE_OPTIONS.poolSize.default;
export const MAX_POOL_SIZE: number = STORE_OPTIONS.poolSize.max;
const MIN_HORIZON_MS: number = STORE_OPTIONS.horizonMs.min;

export interface PostgresUrl {
  /** The URL the driver connects with: delayq's own parameters taken out. */
  readonly connectionString: string;
  readonly schema: string | undefined;
  readonly horizonMs: number | undefined;
  /** A statement unanswered this long fails its call (connection.ts createPool); 0: no limit. */
  readonly callTimeoutMs: number | undefined;
  /** Apply missing migrations on open (auto, the default) or refuse to open without them (never). */
  readonly migrate: MigrateMode | undefined;
  /** The LISTEN connection's URL (driver parameters only), when it is not the pool's. */
  readonly listenUrl: string | undefined;
  readonly poolSize: number | undefined;
  /** For logs and `description`: no password, no query. */
  readonly redacted: string;
}

/** Whether `n` is a pool size delayq takes. */
export function isPoolSize(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && n <= MAX_POOL_SIZE;
}

export const POOL_SIZE_RULE = `must be an integer from 1 to ${MAX_POOL_SIZE}`;

/** A PostgreSQL URL's scheme, host and database, checked; `what` names it in errors. */
function connectionUrl(spec: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(spec);
  } catch {
    throw new DelayQError('INVALID_STORE_URL', `${what} "${redactUrl(spec)}": not a URL; use postgres://user@host:port/database[?schema=name]`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new DelayQError('INVALID_STORE_URL', `${what} "${redactUrl(spec)}": a PostgreSQL URL starts with postgres:// or postgresql://`);
  if (url.hostname === '') throw new DelayQError('INVALID_STORE_URL', `${what} "${redactUrl(spec)}": give a host, e.g. postgres://user@127.0.0.1:5432/db`);
  if (url.pathname.length <= 1) throw new DelayQError('INVALID_STORE_URL', `${what} "${redactUrl(spec)}": give a database, e.g. postgres://user@host:5432/db`);
  return url;
}

/** The LISTEN connection's URL (listenUrl): a PostgreSQL URL with driver parameters only. */
export function checkListenUrl(spec: string): string {
  const url = connectionUrl(spec, 'listenUrl');
  for (const key of url.searchParams.keys())
    if (!DRIVER_PARAMETERS.has(key))
      throw new DelayQError('INVALID_STORE_URL', `listenUrl "${redactUrl(spec)}": unknown parameter "${key}"; it takes only ${[...DRIVER_PARAMETERS].join(', ')}`, { parameter: 'listenUrl' });
  return url.href;
}

export function parsePostgresUrl(spec: string): PostgresUrl {
  const url = connectionUrl(spec, 'store');
  for (const key of url.searchParams.keys())
    if (!OWN_PARAMETERS.has(key) && !DRIVER_PARAMETERS.has(key))
      throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": ${unknownParameter('postgres', key, [...OWN_PARAMETERS, ...DRIVER_PARAMETERS])}`, { parameter: key });
  const schema = url.searchParams.get('schema') ?? undefined;
  if (schema !== undefined && !SCHEMA_PATTERN.test(schema))
    throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": schema must be 1 to 48 characters of [a-z0-9_], not starting with a digit or pg_ (reserved by PostgreSQL)`, { parameter: 'schema' });
  const horizonText = url.searchParams.get('horizonMs');
  const horizonMs = horizonText === null ? undefined : Number(horizonText);
  if (horizonMs !== undefined && !(Number.isSafeInteger(horizonMs) && horizonMs >= MIN_HORIZON_MS))
    throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": horizonMs must be an integer >= ${MIN_HORIZON_MS}`, { parameter: 'horizonMs' });
  const timeoutText = url.searchParams.get('callTimeoutMs');
  const callTimeoutMs = timeoutText === null ? undefined : Number(timeoutText);
  if (callTimeoutMs !== undefined && !isCallTimeout(callTimeoutMs))
    throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": callTimeoutMs ${CALL_TIMEOUT_RULE}`, { parameter: 'callTimeoutMs' });
  const migrate = url.searchParams.get('migrate') ?? undefined;
  if (migrate !== undefined && !MIGRATE_MODES.has(migrate))
    throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": migrate must be auto or never`, { parameter: 'migrate' });
  const listenText = url.searchParams.get('listenUrl');
  const listenUrl = listenText === null ? undefined : checkListenUrl(listenText);
  const poolText = url.searchParams.get('poolSize');
  const poolSize = poolText === null ? undefined : Number(poolText);
  if (poolSize !== undefined && !isPoolSize(poolSize))
    throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": poolSize ${POOL_SIZE_RULE}`, { parameter: 'poolSize' });
  const driverUrl = new URL(url.href);
  for (const key of OWN_PARAMETERS) driverUrl.searchParams.delete(key);
  return {
    connectionString: driverUrl.href,
    schema,
    horizonMs,
    callTimeoutMs,
    migrate: migrate as MigrateMode | undefined,
    listenUrl,
    poolSize,
    redacted: `${url.protocol}//${url.host}${url.pathname}`,
  };
}

/** Checks a schema name given in code (StoreOptions.schema). */
export function checkSchema(schema: string): string {
  if (!SCHEMA_PATTERN.test(schema)) throw new DelayQError('INVALID_OPTION', 'schema: 1 to 48 characters of [a-z0-9_], not starting with a digit or pg_', { field: 'schema' });
  return schema;
}
