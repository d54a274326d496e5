/**
 * The machine's PostgreSQL for tests (127.0.0.1:5432, user postgres, database test; CI
 * starts it before the suite): store URLs on a fresh schema each, and dropping them after.
 * DELAYQ_TEST_PG overrides the URL of the database.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_URL = process.env['DELAYQ_TEST_PG'] ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A schema name no other test uses. */
export function freshSchema(prefix = 't'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

export function storeUrl(schema: string): string {
  return `${PG_URL}?schema=${schema}`;
}

/** Runs `body` with a plain client on the test database, closed after. */
export async function withClient<T>(body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await withClient((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
}
