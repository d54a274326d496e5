/**
 * What `delayq serve` tells its operator at start: one banner once it listens (where the
 * API, the dashboard, the metrics and the OpenAPI document are, which store, whether a
 * token is required), and one line on stderr when it cannot start. A failure it knows
 * (the store locked by another process, the port in use, a store it cannot open) is one
 * sentence, never a stack.
 */
import { DelayQError } from '../core/errors.js';
import { redactUrlsIn } from '../core/redact.js';
import { isLoopback } from './config.js';
import type { ServerConfig } from './config.js';
import { SERVER_VERSION } from './routes/system.js';

export interface Banner {
  /** For the JSON log: one line, `msg` "delayq listening", these fields. */
  readonly fields: Readonly<Record<string, unknown>>;
  /** For a person: a few aligned lines. */
  readonly text: string;
}

export function startBanner(address: string, storeUrl: string, config: Pick<ServerConfig, 'token' | 'ui' | 'metricsPublic' | 'host'>): Banner {
  const auth = config.token !== undefined;
  const store = redactUrlsIn(storeUrl);
  const fields = {
    address,
    version: SERVER_VERSION,
    api: `${address}/v1`,
    dashboard: config.ui ? `${address}/ui/` : null,
    metrics: `${address}/metrics`,
    openapi: `${address}/openapi.json`,
    store,
    auth,
  };
  const token = auth
    ? 'required on /v1 (Authorization: Bearer ...)'
    : isLoopback(config.host)
      ? 'none: /v1 is open to any process on this machine (loopback only)'
      : 'none: /v1 is open to anyone who can reach this address (--allow-public)';
  const rows: [string, string][] = [
    ['API', fields.api],
    ['dashboard', fields.dashboard ?? 'off (--no-ui)'],
    ['metrics', `${fields.metrics}${auth && !config.metricsPublic ? ' (token required)' : ''}`],
    ['OpenAPI', fields.openapi],
    ['store', store],
    ['token', token],
  ];
  const text = [`delayq ${SERVER_VERSION} listening on ${address}`, ...rows.map(([name, value]) => `  ${name.padEnd(10)} ${value}`)].join('\n') + '\n';
  return { fields, text: redactUrlsIn(text) };
}

/**
 * The one line to print when the server could not start, and whether the failure is a known
 * one (else the caller logs its stack as well).
 */
export function startFailure(error: unknown, config: Pick<ServerConfig, 'host' | 'port'>): { readonly line: string; readonly known: boolean } {
  const code = (error as { code?: unknown } | null)?.code;
  const message = redactUrlsIn(error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
  if (code === 'EADDRINUSE')
    return { line: `could not start: port ${config.port} on ${config.host} is in use by another process; stop it or choose another port with --port / DELAYQ_PORT`, known: true };
  if (code === 'EADDRNOTAVAIL') return { line: `could not start: cannot listen on ${config.host}: no such address on this machine (--host / DELAYQ_HOST)`, known: true };
  if (code === 'EACCES') return { line: `could not start: not allowed to listen on ${config.host}:${config.port} (ports below 1024 need privileges)`, known: true };
  if (error instanceof DelayQError) {
    const hint = error.code === 'STORE_LOCKED' ? '; stop the other process, or give this one another --store' : '';
    return { line: `could not start: ${message}${hint} (${error.code})`, known: true };
  }
  return { line: `could not start: ${message}`, known: false };
}
