/**
 * The store's connections: a small pool of node-postgres clients (pg), which only this
 * store imports, and the translation of the driver's errors into DelayQErrors.
 *
 * bigint columns are read as numbers through the pool's own type parsers, never through
 * `pg.types.setTypeParser`, which would change them for every other user of pg in the
 * process (an application's own queries included). Times and seqs stay below 2^53.
 */
import { own } from '../../core/dict.js';
import pg from 'pg';
import { DelayQError } from '../../core/errors.js';
import type { Logger } from '../../core/ports/index.js';
import { DEFAULT_CALL_TIMEOUT_MS } from '../shared/call-timeout.js';
import { DEFAULT_POOL_SIZE } from './url.js';

/** What runs a query: the pool, one of its clients, or a client the caller holds (a transaction). */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

const INT8_OID = 20;

const readInt8 = (text: string): number => Number(text);

const types = {
  getTypeParser: ((oid: number, format: 'text' | 'binary' = 'text'): unknown => (oid === INT8_OID ? readInt8 : (pg.types.getTypeParser(oid, format) as unknown))) as pg.CustomTypesConfig['getTypeParser'],
};


/**
 * No startup parameters and no session state (docs/postgres.md, "pgbouncer"): a pool may go
 * through a transaction pooler, which refuses the startup parameter `options`
 * ("unsupported startup parameter") and hands each transaction to whichever server
 * connection is free, so a `SET`, a prepared statement or a `LISTEN` made on one is lost, or
 * leaks to another client. So every statement goes unnamed (parsed and planned for its own
 * values each time: no generic plan cached while the table was small, ADR 0045), and the
 * planner settings a statement needs go with it (context.ts `planned`, migration 0011;
 * ADR 0053). PGOPTIONS, which node-postgres sends when set, is the operator's.
 */
/** How long a new connection may take when callTimeoutMs is 0. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * `callTimeoutMs`: a statement with no answer within it rejects (STORE_UNAVAILABLE, see
 * operationError) and its connection is dropped, never reused: a server that froze, or a
 * network that silently drops packets, would otherwise keep every call waiting for as long
 * as TCP takes to give up (hours). A new connection (or a wait for a free one) is held to
 * the same limit, so a call waits at most twice it. TCP keepalive finds such a dead peer of
 * an idle connection too.
 */
export function createPool(connectionString: string, logger: Logger, callTimeoutMs = DEFAULT_CALL_TIMEOUT_MS, max = DEFAULT_POOL_SIZE): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    types,
    connectionTimeoutMillis: callTimeoutMs > 0 ? callTimeoutMs : CONNECT_TIMEOUT_MS,
    // A startup parameter pgbouncer keeps for its clients, unlike `options`.
    application_name: 'delayq',
    keepAlive: true,
    ...(callTimeoutMs > 0 ? { query_timeout: callTimeoutMs } : {}),
  });
  // An idle client whose server went away: pg emits it on the pool, and with no listener the process dies.
  pool.on('error', (error) => logger.warn({ err: error }, 'postgres: an idle connection failed; the pool opens a new one'));
  // And on every client, for good: pg-pool listens on a client only while it is idle, and its
  // holders (withPoolClient, pool.query) only while they hold it. A termination
  // (pg_terminate_backend, a server shutting down) reaching a client checked out with no
  // query active and no listener yet emitted 'error' with nobody listening and ended the
  // process (the chaos cell pg-backend-kill: 5 runs of 5). Whoever holds the client still
  // sees the error, and its next query fails (STORE_UNAVAILABLE) and drops it.
  pool.on('connect', (client) => client.on('error', (error) => logger.debug({ err: error }, 'postgres: a connection failed')));
  return pool;
}

/**
 * Runs `body` on a client checked out of the pool (a transaction, the migration at open) and
 * releases it after, destroyed if its connection failed meanwhile or `body` called
 * `discard`. node-postgres emits 'error' on a client whose connection ends (a server
 * crash: the query in flight rejects too), and the pool listens for it only on the clients
 * it holds idle: a checked-out client with no listener of its own would throw it as an
 * uncaught exception and end the process.
 */
export async function withPoolClient<T>(pool: pg.Pool, body: (client: pg.PoolClient, discard: () => void) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  const onError = (): void => void (broken = true);
  client.on('error', onError);
  try {
    return await body(client, onError);
  } catch (error) {
    // Its statement may still be running on the server: the connection is of no more use.
    if (isTimeout(error)) broken = true;
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/** A dedicated client outside the pool (LISTEN, `delayq migrate`), with the same type parsers. */
export function createClient(connectionString: string, applicationName = 'delayq-listen'): pg.Client {
  return new pg.Client({ connectionString, types, application_name: applicationName, keepAlive: true });
}

/**
 * `client` with its statements exempt from the call timeout (a day instead): the migration
 * at open, which may wait for another process's migration and may rewrite a large table.
 */
export function withoutCallTimeout(client: pg.ClientBase): Queryable {
  return {
    query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
      // node-postgres reads a query's own query_timeout (its types do not list it).
      client.query<R>({ text, values, query_timeout: 86_400_000 } as pg.QueryConfig),
  };
}

/** node-postgres' error for a statement unanswered within `query_timeout`. */
export function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Query read timeout';
}

/** pg-pool's errors for a connection not made, or not free, within `connectionTimeoutMillis`. */
function isConnectTimeout(error: unknown): boolean {
  return error instanceof Error && (error.message === 'Connection terminated due to connection timeout' || error.message === 'timeout exceeded when trying to connect');
}

const CONNECT_CODES: Readonly<Record<string, string>> = {
  '28P01': 'wrong password',
  '28000': 'the server refused the user (pg_hba.conf or no such role)',
  '3D000': 'no such database',
  '42501': 'permission denied',
};

/** A driver error at open, said plainly: where, and why. */
export function openError(where: string, error: unknown): DelayQError {
  if (error instanceof DelayQError) return error;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const known = typeof code === 'string' ? own(CONNECT_CODES, code) : undefined;
  const why = known !== undefined ? `${known} (${message})` : message;
  return new DelayQError('STORE_UNAVAILABLE', `postgres store ${where}: cannot open: ${why}`, { code }, { cause: error });
}

/**
 * A driver error during an operation: the store failed. Nothing of the call is known to have
 * changed, though a statement whose answer was lost (a connection cut, a timeout) may have
 * committed: the writes are idempotent by id or fenced by receipt, so calling again is safe.
 */
export function operationError(where: string, error: unknown, callTimeoutMs = 0): DelayQError {
  if (error instanceof DelayQError) return error;
  const message = isTimeout(error)
    ? `no answer within ${callTimeoutMs > 0 ? `${callTimeoutMs} ms (callTimeoutMs)` : "the client's query_timeout"}: the server is stuck, overloaded or unreachable`
    : isConnectTimeout(error) && callTimeoutMs > 0
      ? `no connection within ${callTimeoutMs} ms (callTimeoutMs): the server is stuck, overloaded or unreachable`
      : error instanceof Error
      ? error.message
      : String(error);
  return new DelayQError('STORE_UNAVAILABLE', `postgres store ${where}: ${message}`, { code: (error as { code?: unknown }).code }, { cause: error });
}

/** Serialization failures and deadlocks: the statement was rolled back whole and may run again. */
export function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '40001' || code === '40P01';
}
