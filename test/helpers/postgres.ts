/**
 * The PostgreSQL server of the tests: $DELAYQ_TEST_PG, else the machine's (127.0.0.1:5432,
 * user postgres, database test). scripts/run-tests.ts sets DELAYQ_TEST_PG for the files it
 * runs: to the machine's server when one answers there, else to a cluster it starts for the
 * run (test/helpers/postgres-server.ts). Store URLs on a fresh schema each, dropped after.
 */
// test-needs: postgres
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The machine's server, where CI starts one. */
export const MACHINE_PG_URL = 'postgres://postgres@127.0.0.1:5432/test';

export const PG_URL = process.env['DELAYQ_TEST_PG'] || MACHINE_PG_URL;

/** PG_URL with another user or database: the same server. */
export function pgUrlWith(change: { readonly user?: string; readonly database?: string }): string {
  const url = new URL(PG_URL);
  if (change.user !== undefined) url.username = change.user;
  if (change.database !== undefined) url.pathname = `/${change.database}`;
  return url.toString();
}

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

/** The test database's URL as `role` (no password: the machine's server trusts loopback), with a query. */
export function urlAs(role: string, query: Record<string, string> = {}): string {
  const url = new URL(PG_URL);
  url.username = role;
  url.password = '';
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  return url.href;
}

/**
 * Roles of a test's own on the machine's server (created LOGIN, no other attribute: not
 * superuser, no CREATEROLE, no CREATEDB), named `<prefix>_<hex>`; `drop` removes what they
 * own and every privilege granted to them, then the roles.
 */
export async function tempRoles(...prefixes: string[]): Promise<{ names: string[]; drop: () => Promise<void> }> {
  const roles = roleNames(...prefixes);
  await withClient(async (c) => {
    for (const name of roles.names) await c.query(`CREATE ROLE "${name}" LOGIN`);
  });
  return roles;
}

/** Names for roles a test creates itself (`<prefix>_<hex>`), and `drop` as tempRoles's. */
export function roleNames(...prefixes: string[]): { names: string[]; drop: () => Promise<void> } {
  const suffix = randomBytes(4).toString('hex');
  const names = prefixes.map((p) => `${p}_${suffix}`);
  return {
    names,
    drop: () =>
      withClient(async (c) => {
        for (const name of names) await c.query(`DROP OWNED BY "${name}" CASCADE`).catch(() => undefined);
        for (const name of names) await c.query(`DROP ROLE IF EXISTS "${name}"`);
      }),
  };
}
