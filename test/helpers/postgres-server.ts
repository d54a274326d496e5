/**
 * The PostgreSQL server a test run uses, found or started once per run by
 * scripts/run-tests.ts and handed to every test process as $DELAYQ_TEST_PG:
 * - $DELAYQ_TEST_PG when it is set: it must answer, or the run fails saying so;
 * - else the machine's server (127.0.0.1:5432, user postgres, database test) when it answers;
 * - else, when nothing answers there, a cluster of the run's own (initdb + pg_ctl on a free
 *   port with its own data directory: test/helpers/postgres-cluster.ts) with a database
 *   `test`, stopped and removed after the run;
 * - else (no server binaries) the run fails with the command that installs them.
 * Something that answers on 5432 but refuses (a password, no database `test`) fails the run
 * too: it is not taken for an absent server.
 */
import pg from 'pg';
import { postgresBinariesMissing, startCluster, type PgCluster } from './postgres-cluster.js';
import { MACHINE_PG_URL } from './postgres.js';

export interface TestPostgres {
  readonly url: string;
  /** What the run uses, for its log. */
  readonly description: string;
  /** The cluster started for the run, or null (a server that was already there). */
  readonly cluster: PgCluster | null;
}

/** Connection errors that mean nothing listens at the address. */
const NOTHING_THERE = new Set(['ECONNREFUSED', 'ENOENT', 'EADDRNOTAVAIL']);

/** 'answers', 'absent' when nothing listens there, or the error of a server that refused. */
export async function probe(url: string, timeoutMs = 5_000): Promise<'answers' | 'absent' | Error> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return 'answers';
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && NOTHING_THERE.has(code)) return 'absent';
    return error instanceof Error ? error : new Error(String(error));
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Finds or starts the server of a test run (the rules above); `machineUrl` is replaceable for the test of this. */
export async function testPostgres(given: string | undefined, machineUrl = MACHINE_PG_URL): Promise<TestPostgres> {
  if (given !== undefined && given !== '') {
    const found = await probe(given);
    if (found !== 'answers') throw new Error(`DELAYQ_TEST_PG=${given} does not answer (${found === 'absent' ? 'nothing listens there' : found.message}): start that server, or unset DELAYQ_TEST_PG`);
    return { url: given, description: `DELAYQ_TEST_PG (${given})`, cluster: null };
  }
  const machine = await probe(machineUrl);
  if (machine === 'answers') return { url: machineUrl, description: `the machine's server (${machineUrl})`, cluster: null };
  if (machine !== 'absent')
    throw new Error(`${machineUrl} answers but refuses the tests (${machine.message}): give them user postgres with trust auth and a database test, or set DELAYQ_TEST_PG to a server they can use`);
  const missing = postgresBinariesMissing();
  if (missing !== null) throw new Error(`nothing answers at ${machineUrl}, and no PostgreSQL of the run's own can be started: ${missing}; or set DELAYQ_TEST_PG`);
  const cluster = await startCluster();
  try {
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    try {
      await admin.query('CREATE DATABASE test');
    } finally {
      await admin.end();
    }
  } catch (error) {
    cluster.remove();
    throw error;
  }
  const url = `postgres://postgres@127.0.0.1:${cluster.port}/test`;
  return { url, description: `nothing answers at ${machineUrl}: a cluster of the run's own on 127.0.0.1:${cluster.port} (initdb + pg_ctl, ${cluster.dir})`, cluster };
}
