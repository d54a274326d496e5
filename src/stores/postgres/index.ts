/**
 * openPostgresStore: the composition root of the PostgreSQL store. It connects, checks or
 * migrates the schema (schema.ts), and builds the store. Any failure before the store is
 * built closes what it opened and is one DelayQError that says why (an unreachable server,
 * a wrong password, a missing database: STORE_UNAVAILABLE; a schema that is not delayq's or
 * was written by a newer delayq: STORE_INCOMPATIBLE), and nothing is written. See
 * docs/postgres.md.
 */
import { randomInt } from 'node:crypto';
import { DelayQError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { Clock, TaskStore } from '../../core/ports/index.js';
import type { StoreOptions } from '../open-store.js';
import { createClient, createPool, openError, type Queryable } from './connection.js';
import { PgContext } from './context.js';
import { COUNTER_SLOTS } from './counters.js';
import { PostgresStore } from './postgres-store.js';
import { migrate } from './schema.js';
import { checkSchema, DEFAULT_SCHEMA, parsePostgresUrl } from './url.js';

export const DEFAULT_HORIZON_MS = 60_000;

export interface PostgresStoreOptions extends StoreOptions {
  /** The store's background work runs on it; the store reads no clock of its own. */
  readonly clock: Clock;
}

export async function openPostgresStore(spec: string, options: PostgresStoreOptions): Promise<TaskStore> {
  const url = parsePostgresUrl(spec);
  const schema = agreed('schema', url.schema, options.schema === undefined ? undefined : checkSchema(options.schema), spec) ?? DEFAULT_SCHEMA;
  const horizonMs = agreed('horizonMs', url.horizonMs, options.horizonMs, spec) ?? DEFAULT_HORIZON_MS;
  if (!Number.isInteger(horizonMs) || horizonMs < 1_000)
    throw new DelayQError('INVALID_OPTION', `horizonMs: must be an integer >= 1000 (got ${String(horizonMs)})`, { field: 'horizonMs' });
  const logger = options.logger ?? silentLogger;
  const where = `${url.redacted} (schema ${schema})`;
  const pool = createPool(url.connectionString, logger);
  const holder = createClient(url.connectionString);
  // A dropped holder connection drops the lock: say so (the store's writes go on through the pool).
  holder.on('error', (error) => logger.error({ err: error, schema }, 'postgres: the connection holding the schema lock failed; another process may now open the schema'));
  try {
    const client = await pool.connect();
    try {
      await migrate(client, schema);
    } finally {
      client.release();
    }
    await holder.connect();
    await holdSchema(holder, schema);
  } catch (error) {
    await holder.end().catch(() => undefined);
    await pool.end().catch(() => undefined);
    throw openError(where, error);
  }
  const pg = new PgContext(pool, schema, randomInt(COUNTER_SLOTS), where);
  return new PostgresStore({ pg, description: `postgres:${url.redacted}?schema=${schema}`, horizonMs, logger, shared: null, stopShared: () => holder.end() });
}

/**
 * One process per schema, until this store has the coordination several processes need
 * (docs/postgres.md, "What is not done yet"): a session advisory lock, held on a connection
 * of its own for the store's life and released by the server when that connection ends,
 * however the process ends. A second process is refused with STORE_LOCKED, as SQLite does.
 */
async function holdSchema(holder: Queryable, schema: string): Promise<void> {
  const { rows } = await holder.query<{ held: boolean }>("SELECT pg_try_advisory_lock(hashtext('delayq owner ' || $1)) AS held", [schema]);
  if (rows[0]?.held !== true)
    throw new DelayQError('STORE_LOCKED', `postgres schema "${schema}" is held by another delayq process (one process per schema for now: docs/postgres.md)`, { schema });
}

/** A value given both in the URL and in code must be the same. */
function agreed<T>(name: string, inUrl: T | undefined, inCode: T | undefined, spec: string): T | undefined {
  if (inUrl !== undefined && inCode !== undefined && inUrl !== inCode)
    throw new DelayQError('INVALID_OPTION', `${name}: the store URL says ${String(inUrl)}, the options say ${String(inCode)}`, { field: name, url: spec.replace(/\/\/[^@/]*@/, '//***@') });
  return inCode ?? inUrl;
}
