/**
 * `delayq migrate` on a PostgreSQL schema: its status, the SQL that would bring it to this
 * build's version, and that SQL applied, each over one connection of its own (no pool, no
 * listener, no lease: nothing of a running store). The store's own open runs the same
 * `openSchema` under `migrate=auto`.
 */
import type { StoreMigrator, StoreOptions } from '../open-store.js';
import { agreedOption } from '../shared/store-options.js';
import { createClient, openError, withoutCallTimeout } from './connection.js';
import { migrationScript, openSchema, schemaStatus } from './schema.js';
import { checkSchema, DEFAULT_SCHEMA, parsePostgresUrl } from './url.js';

export async function openPostgresMigrator(spec: string, options: Pick<StoreOptions, 'schema'> = {}): Promise<StoreMigrator> {
  const url = parsePostgresUrl(spec);
  const fromCode = options.schema === undefined ? undefined : checkSchema(options.schema);
  const schema = agreedOption('schema', url.schema, fromCode, spec) ?? DEFAULT_SCHEMA;
  const where = `${url.redacted} (schema ${schema})`;
  const client = createClient(url.connectionString, 'delayq-migrate');
  // A connection that fails while idle (a server restart) must not end the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw openError(where, error);
  }
  const session = withoutCallTimeout(client);
  const failed = (error: unknown): never => {
    throw openError(where, error);
  };
  return {
    status: () => schemaStatus(session, schema).catch(failed),
    script: async () => migrationScript(await schemaStatus(session, schema).catch(failed)),
    apply: async () => {
      const before = await schemaStatus(session, schema).catch(failed);
      await openSchema(session, schema, 'auto').catch(failed);
      return { from: before.version, ...(await schemaStatus(session, schema).catch(failed)) };
    },
    close: () => client.end(),
  };
}

