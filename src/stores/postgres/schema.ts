/**
 * A delayq schema's version, and the migrations that bring it to this build's
 * (sql/migrations/; docs/postgres.md, "Roles" and "Migrations"). Each run is one transaction
 * under `pg_advisory_xact_lock`, so two processes that start at once migrate once (the second
 * waits, then finds nothing to do), and a refusal rolls it back: nothing is written.
 *
 *   schema missing                       -> CREATE SCHEMA, then every migration
 *   schema present and empty             -> every migration (no CREATE SCHEMA: a role that was
 *                                           given a schema needs no CREATE on the database)
 *   schema with meta, version v < last   -> the migrations after v (migrate=auto), or
 *                                           SCHEMA_OUTDATED (migrate=never, or a role that may
 *                                           not change the schema: run `delayq migrate`)
 *   schema with meta, version v = last   -> nothing: no DDL, no write
 *   schema with meta, version v > last   -> SCHEMA_OUTDATED (a newer delayq migrated it)
 *   schema with tables but no meta       -> STORE_INCOMPATIBLE (not delayq's)
 *
 * `delayq migrate` (the CLI, through open-store.ts) reads `schemaStatus`, prints
 * `migrationScript` and runs `openSchema(..., 'auto')`.
 */
import { DelayQError } from '../../core/errors.js';
import type { Queryable } from './connection.js';
import type { MigrationReport } from '../open-store.js';
import { forSchema, loadMigrations, statement, type StatementName } from './sql-files.js';

/** The migrations (sql/migrations/), read when the store is first opened. */
const MIGRATIONS = loadMigrations();
export const SCHEMA_VERSION = MIGRATIONS.length;
/** Marks a schema as delayq's (meta 'application'). */
const APPLICATION = 'delayq';
/** SQLSTATE insufficient_privilege. */
const PERMISSION_DENIED = '42501';

/** `migrate` of the store URL: apply missing migrations when opening (auto), or refuse to open a schema that lacks them (never). */
export type MigrateMode = 'auto' | 'never';

/** Where a schema stands: the report of `delayq migrate --status` (pending is empty when it is current or ahead). */
export type SchemaStatus = MigrationReport;

/**
 * On open: the schema at this build's version, migrated first when `mode` allows; returns its
 * shard count (meta 'shards', fixed when it was created).
 */
export async function openSchema(client: Queryable, schema: string, mode: MigrateMode): Promise<number> {
  const sql = (name: StatementName): string => forSchema(statement(name), schema);
  await client.query('BEGIN');
  try {
    await client.query(sql('migrate-lock'), [schema]);
    const { exists, version } = await storedVersion(client, schema);
    if (version > SCHEMA_VERSION) throw ahead(schema, version);
    if (version < SCHEMA_VERSION) {
      if (mode === 'never') throw behind(schema, version, 'the store URL says migrate=never');
      await applyFrom(client, schema, exists, version);
    }
    const shards = await client.query<{ value: string }>(sql('schema-shards'));
    await client.query('COMMIT');
    return Number(shards.rows[0]?.value);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

async function applyFrom(client: Queryable, schema: string, exists: boolean, version: number): Promise<void> {
  try {
    if (!exists) await client.query(forSchema(statement('schema-create'), schema));
    for (const migration of MIGRATIONS.slice(version)) await client.query(forSchema(migration.sql, schema));
    await client.query(forSchema(statement('schema-mark'), schema), [APPLICATION, String(SCHEMA_VERSION)]);
  } catch (error) {
    // A runtime role may use a schema, not change it: say what to run instead.
    if (codeOf(error) === PERMISSION_DENIED)
      throw behind(schema, version, `this role may not change the schema (${(error as Error).message})`, error);
    throw error;
  }
}

/** Where the schema stands against this build, read in one snapshot; changes nothing. */
export async function schemaStatus(client: Queryable, schema: string): Promise<SchemaStatus> {
  const { exists, version } = await storedVersion(client, schema);
  const names = MIGRATIONS.map((m) => m.name);
  return { schema, exists, version, latest: SCHEMA_VERSION, applied: names.slice(0, version), pending: names.slice(version) };
}

/**
 * The SQL `openSchema` would run for a schema at `status`, for a DBA to review or to run
 * with psql (`psql -v ON_ERROR_STOP=1 -f`): one transaction under the same lock, the missing
 * migrations as their files say, and the version mark. Empty when there is nothing to do.
 */
export function migrationScript(status: SchemaStatus): string {
  const { schema, exists, version } = status;
  if (version >= SCHEMA_VERSION) return '';
  const lines = [
    `-- delayq: schema "${schema}" from version ${version} to ${SCHEMA_VERSION} (${MIGRATIONS.slice(version).map((m) => m.name).join(', ')})`,
    'BEGIN;',
    `SELECT pg_advisory_xact_lock(hashtext('delayq migrate ' || '${schema}'));`,
  ];
  if (!exists) lines.push(`${forSchema(statement('schema-create'), schema)};`);
  for (const migration of MIGRATIONS.slice(version)) lines.push(`\n-- ${migration.name}.sql`, forSchema(migration.sql, schema).trim());
  lines.push(
    '',
    `INSERT INTO "${schema}".meta (key, value) VALUES ('application', '${APPLICATION}'), ('schema_version', '${SCHEMA_VERSION}') ON CONFLICT (key) DO UPDATE SET value = excluded.value;`,
    'COMMIT;',
    '',
  );
  return lines.join('\n');
}

interface Stored {
  readonly exists: boolean;
  readonly version: number;
}

/** Version 0 for no schema or an empty one; refuses a schema that holds something not delayq's. */
async function storedVersion(client: Queryable, schema: string): Promise<Stored> {
  const relations = await client.query<{ relname: string | null }>(statement('schema-relations'), [schema]);
  if (relations.rows.length === 0) return { exists: false, version: 0 };
  const names = relations.rows.flatMap((r) => (r.relname === null ? [] : [r.relname]));
  if (names.length === 0) return { exists: true, version: 0 };
  if (!names.includes('meta')) throw notOurs(schema);
  const meta = await client.query<{ key: string; value: string }>(forSchema(statement('schema-meta'), schema)).catch((error: unknown) => {
    if (codeOf(error) === PERMISSION_DENIED)
      throw new DelayQError('STORE_UNAVAILABLE', `postgres schema "${schema}": this role may not read its tables (${(error as Error).message}); grant it the runtime role's privileges (docs/postgres.md, "Roles")`, { schema, code: PERMISSION_DENIED }, { cause: error });
    throw notOurs(schema, error);
  });
  const values = new Map(meta.rows.map((row) => [row.key, row.value]));
  const version = Number(values.get('schema_version'));
  if (values.get('application') !== APPLICATION || !Number.isInteger(version) || version < 1) throw notOurs(schema);
  return { exists: true, version };
}

function codeOf(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}

function behind(schema: string, version: number, why: string, cause?: unknown): DelayQError {
  return new DelayQError(
    'SCHEMA_OUTDATED',
    `postgres schema "${schema}" is at version ${version} and this delayq needs ${SCHEMA_VERSION}; ${why}: apply the migrations first (delayq migrate --store <url>, as the schema's owner)`,
    { schema, version, expected: SCHEMA_VERSION },
    cause === undefined ? undefined : { cause },
  );
}

function ahead(schema: string, version: number): DelayQError {
  return new DelayQError(
    'SCHEMA_OUTDATED',
    `postgres schema "${schema}" is at version ${version}, migrated by a newer delayq (this one knows up to ${SCHEMA_VERSION}); it was left as it is: run the newer delayq`,
    { schema, version, expected: SCHEMA_VERSION },
  );
}

function notOurs(schema: string, cause?: unknown): DelayQError {
  return new DelayQError('STORE_INCOMPATIBLE', `postgres schema "${schema}" holds tables that are not delayq's; give delayq a schema of its own (?schema=name)`, { schema }, cause === undefined ? undefined : { cause });
}
