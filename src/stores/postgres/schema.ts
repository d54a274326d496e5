/**
 * Making sure the schema is delayq's, at this build's version, on open: in one transaction
 * under `pg_advisory_xact_lock`, so two processes that start at once migrate once (the
 * second waits, then finds nothing to do).
 *
 *   schema absent, or present and empty  -> every migration, in order
 *   schema with meta, version v <= last  -> the migrations after v
 *   schema with meta, version v >  last  -> STORE_INCOMPATIBLE (a newer delayq wrote it)
 *   schema with tables but no meta       -> STORE_INCOMPATIBLE (not delayq's)
 *
 * A refusal rolls the transaction back, so nothing is written.
 */
import { DelayQError } from '../../core/errors.js';
import type { Queryable } from './connection.js';
import { forSchema, loadMigrations, statement, type StatementName } from './sql-files.js';

/** The migrations (sql/migrations/), read when the store is first opened. */
const MIGRATIONS = loadMigrations();
export const SCHEMA_VERSION = MIGRATIONS.length;
/** Marks a schema as delayq's (meta 'application'). */
const APPLICATION = 'delayq';

/** Returns the schema's shard count (meta 'shards', fixed when it was created). */
export async function migrate(client: Queryable, schema: string): Promise<number> {
  const sql = (name: StatementName): string => forSchema(statement(name), schema);
  await client.query('BEGIN');
  try {
    await client.query(sql('migrate-lock'), [schema]);
    const version = await storedVersion(client, schema);
    if (version > SCHEMA_VERSION)
      throw new DelayQError('STORE_INCOMPATIBLE', `postgres schema "${schema}" was written by a newer delayq (schema version ${version}; this one reads up to ${SCHEMA_VERSION}); it was left as it is`, { schema, version });
    if (version === 0) await client.query(sql('schema-create'));
    for (let v = version; v < SCHEMA_VERSION; v++) await client.query(forSchema(MIGRATIONS[v]!.sql, schema));
    if (version < SCHEMA_VERSION) await client.query(sql('schema-mark'), [APPLICATION, String(SCHEMA_VERSION)]);
    const shards = await client.query<{ value: string }>(sql('schema-shards'));
    await client.query('COMMIT');
    return Number(shards.rows[0]?.value);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** 0 for no schema or an empty one; refuses a schema that holds something not delayq's. */
async function storedVersion(client: Queryable, schema: string): Promise<number> {
  const relations = await client.query<{ relname: string }>(statement('schema-relations'), [schema]);
  if (relations.rows.length === 0) return 0;
  if (!relations.rows.some((r) => r.relname === 'meta')) throw notOurs(schema);
  const meta = await client.query<{ key: string; value: string }>(forSchema(statement('schema-meta'), schema)).catch((error: unknown) => {
    throw notOurs(schema, error);
  });
  const values = new Map(meta.rows.map((row) => [row.key, row.value]));
  const version = Number(values.get('schema_version'));
  if (values.get('application') !== APPLICATION || !Number.isInteger(version) || version < 1) throw notOurs(schema);
  return version;
}

function notOurs(schema: string, cause?: unknown): DelayQError {
  return new DelayQError('STORE_INCOMPATIBLE', `postgres schema "${schema}" holds tables that are not delayq's; give delayq a schema of its own (?schema=name)`, { schema }, cause === undefined ? undefined : { cause });
}
