/**
 * openPostgresStore: the composition root of the PostgreSQL store. It connects, checks or
 * migrates the schema (schema.ts), and builds the store. Any failure before the store is
 * built closes what it opened and is one DelayQError that says why (an unreachable server,
 * a wrong password, a missing database: STORE_UNAVAILABLE; a schema that is not delayq's or
 * was written by a newer delayq: STORE_INCOMPATIBLE), and nothing is written. See
 * docs/postgres.md.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { DelayQError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { Clock, TaskStore } from '../../core/ports/index.js';
import type { StoreOptions } from '../open-store.js';
import { createPool, openError, withoutCallTimeout, withPoolClient } from './connection.js';
import { CALL_TIMEOUT_RULE, DEFAULT_CALL_TIMEOUT_MS, isCallTimeout } from '../shared/call-timeout.js';
import { agreedOption, intOption } from '../shared/store-options.js';
import { PgContext } from './context.js';
import { COUNTER_SLOTS } from './counters.js';
import { PostgresStore } from './postgres-store.js';
import { openSchema } from './schema.js';
import { PgShared } from './shared.js';
import { checkListenUrl, checkSchema, DEFAULT_POOL_SIZE, DEFAULT_SCHEMA, isPoolSize, parsePostgresUrl, POOL_SIZE_RULE } from './url.js';


export interface PostgresStoreOptions extends StoreOptions {
  /** The store's background work runs on it; the store reads no clock of its own. */
  readonly clock: Clock;
}

export async function openPostgresStore(spec: string, options: PostgresStoreOptions): Promise<TaskStore> {
  const url = parsePostgresUrl(spec);
  const schema = agreedOption('schema', url.schema, options.schema === undefined ? undefined : checkSchema(options.schema), spec) ?? DEFAULT_SCHEMA;
  const horizonMs = intOption('horizonMs', agreedOption('horizonMs', url.horizonMs, options.horizonMs, spec));
  const logger = options.logger ?? silentLogger;
  const where = `${url.redacted} (schema ${schema})`;
  if (options.callTimeoutMs !== undefined && !isCallTimeout(options.callTimeoutMs))
    throw new DelayQError('INVALID_OPTION', `callTimeoutMs ${CALL_TIMEOUT_RULE}`, { field: 'callTimeoutMs' });
  const callTimeoutMs = agreedOption('callTimeoutMs', url.callTimeoutMs, options.callTimeoutMs, spec) ?? DEFAULT_CALL_TIMEOUT_MS;
  if (options.migrate !== undefined && options.migrate !== 'auto' && options.migrate !== 'never')
    throw new DelayQError('INVALID_OPTION', `migrate: must be 'auto' or 'never' (got ${String(options.migrate)})`, { field: 'migrate' });
  const migrate = agreedOption('migrate', url.migrate, options.migrate, spec) ?? 'auto';
  if (options.poolSize !== undefined && !isPoolSize(options.poolSize)) throw new DelayQError('INVALID_OPTION', `poolSize ${POOL_SIZE_RULE}`, { field: 'poolSize' });
  const poolSize = agreedOption('poolSize', url.poolSize, options.poolSize, spec) ?? DEFAULT_POOL_SIZE;
  const listenUrl = agreedOption('listenUrl', url.listenUrl, options.listenUrl === undefined ? undefined : checkListenUrl(options.listenUrl), spec);
  const pool = createPool(url.connectionString, logger, callTimeoutMs, poolSize);
  let shards: number;
  try {
    shards = await withPoolClient(pool, (client) => openSchema(withoutCallTimeout(client), schema, migrate));
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw openError(where, error);
  }
  const pg = new PgContext(pool, schema, randomInt(COUNTER_SLOTS), shards, where, callTimeoutMs, options.clock);
  const shared = new PgShared({ pg, connectionString: listenUrl ?? url.connectionString, owner: randomBytes(6).toString('base64url'), horizonMs, clock: options.clock, logger });
  try {
    await shared.start();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw openError(where, error);
  }
  return new PostgresStore({ pg, description: `postgres:${url.redacted}?schema=${schema}`, horizonMs, logger, shared, clock: options.clock });
}
