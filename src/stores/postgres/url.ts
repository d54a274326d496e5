/**
 * The PostgreSQL store URL: `postgres://user[:password]@host[:port]/database[?options]`
 * (also `postgresql://`). The query holds delayq's options and the few connection ones it
 * passes to the driver; anything else is refused (INVALID_STORE_URL), so a typo never
 * silently opens another schema.
 *
 *   postgres://app@db.internal:5432/orders?schema=delayq_orders&horizonMs=60000&callTimeoutMs=15000
 */
import { DelayQError } from '../../core/errors.js';
import { redactUrl } from '../../core/redact.js';
import { CALL_TIMEOUT_RULE, isCallTimeout } from '../shared/call-timeout.js';

export const DEFAULT_SCHEMA = 'delayq';
/**
 * A plain lower-case identifier: never needs quoting in hand-written SQL (`delayq.schedule(...)`),
 * and short enough for the notification channels named after it (channels.ts).
 */
const SCHEMA_PATTERN = /^(?!pg_)[a-z_][a-z0-9_]{0,47}$/;
/** Passed to the driver as they are. */
const DRIVER_PARAMETERS = new Set(['sslmode', 'application_name', 'connect_timeout']);
const OWN_PARAMETERS = new Set(['schema', 'horizonMs', 'callTimeoutMs']);

export interface PostgresUrl {
  /** The URL the driver connects with: delayq's own parameters taken out. */
  readonly connectionString: string;
  readonly schema: string | undefined;
  readonly horizonMs: number | undefined;
  /** A statement unanswered this long fails its call (connection.ts createPool); 0: no limit. */
  readonly callTimeoutMs: number | undefined;
  /** For logs and `description`: no password, no query. */
  readonly redacted: string;
}

export function parsePostgresUrl(spec: string): PostgresUrl {
  let url: URL;
  try {
    url = new URL(spec);
  } catch {
    throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": not a URL; use postgres://user@host:port/database[?schema=name]`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": a PostgreSQL URL starts with postgres:// or postgresql://`);
  if (url.hostname === '') throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": give a host, e.g. postgres://user@127.0.0.1:5432/db`);
  if (url.pathname.length <= 1) throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": give a database, e.g. postgres://user@host:5432/db`);
  for (const key of url.searchParams.keys())
    if (!OWN_PARAMETERS.has(key) && !DRIVER_PARAMETERS.has(key))
      throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": unknown parameter "${key}"; known: ${[...OWN_PARAMETERS, ...DRIVER_PARAMETERS].join(', ')}`, { parameter: key });
  const schema = url.searchParams.get('schema') ?? undefined;
  if (schema !== undefined && !SCHEMA_PATTERN.test(schema))
    throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": schema must be 1 to 48 characters of [a-z0-9_], not starting with a digit or pg_ (reserved by PostgreSQL)`, { parameter: 'schema' });
  const horizonText = url.searchParams.get('horizonMs');
  const horizonMs = horizonText === null ? undefined : Number(horizonText);
  if (horizonMs !== undefined && !(Number.isInteger(horizonMs) && horizonMs >= 1_000))
    throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": horizonMs must be an integer >= 1000`, { parameter: 'horizonMs' });
  const timeoutText = url.searchParams.get('callTimeoutMs');
  const callTimeoutMs = timeoutText === null ? undefined : Number(timeoutText);
  if (callTimeoutMs !== undefined && !isCallTimeout(callTimeoutMs))
    throw new DelayQError('INVALID_STORE_URL', `store "${redactUrl(spec)}": callTimeoutMs ${CALL_TIMEOUT_RULE}`, { parameter: 'callTimeoutMs' });
  const driverUrl = new URL(url.href);
  for (const key of OWN_PARAMETERS) driverUrl.searchParams.delete(key);
  return { connectionString: driverUrl.href, schema, horizonMs, callTimeoutMs, redacted: `${url.protocol}//${url.host}${url.pathname}` };
}

/** Checks a schema name given in code (StoreOptions.schema). */
export function checkSchema(schema: string): string {
  if (!SCHEMA_PATTERN.test(schema)) throw new DelayQError('INVALID_OPTION', 'schema: 1 to 48 characters of [a-z0-9_], not starting with a digit or pg_', { field: 'schema' });
  return schema;
}
