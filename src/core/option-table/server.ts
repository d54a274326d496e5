/** The options only the HTTP server reads (`delayq serve`): listening, auth, logs, HTTP limits, the dashboard. */
import type { OptionSpec } from './spec.js';

const server = (flag: string, env: string, type: OptionSpec['type'], def: OptionSpec['default'], description: string, bounds: Partial<OptionSpec> = {}): OptionSpec => ({
  library: null,
  type,
  default: def,
  scope: ['server'],
  flag,
  env,
  description,
  ...bounds,
});

export const SERVER_OPTIONS = {
  store: {
    library: 'store',
    type: 'string',
    default: 'sqlite:./delayq.db',
    scope: ['server'],
    flag: 'store',
    env: 'DELAYQ_STORE',
    // test/core/option-table.test.ts checks that it names every kind's usage (src/stores/kinds.ts).
    description:
      'where tasks live: memory, sqlite:<file>, redis://host:port[/db] (rediss:// for TLS), redis+cluster://host:port,host:port, or postgres://user@host:port/db (or postgresql://); store options in the query (?prefix=ns&shards=16) or by their flags',
  },
  host: server('host', 'DELAYQ_HOST', 'string', '127.0.0.1', 'address to listen on'),
  port: server('port', 'DELAYQ_PORT', 'integer', 7420, 'port to listen on (0: any free port)', { min: 0, max: 65_535 }),
  token: server('token', 'DELAYQ_TOKEN', 'string', null, 'bearer token every /v1 request must carry (the global --token of the CLI)'),
  allowPublic: server('allowPublic', 'DELAYQ_ALLOW_PUBLIC', 'boolean', false, 'allow a non-loopback host without a token (1/true)'),
  allowHost: server(
    'allowHost',
    'DELAYQ_ALLOW_HOST',
    'list',
    null,
    'without a token, comma-separated host names the API answers besides localhost, 127.0.0.1 and [::1] (its name behind a proxy, e.g. delayq.internal); any other Host is refused (DNS rebinding)',
  ),
  logLevel: server('logLevel', 'DELAYQ_LOG_LEVEL', 'enum', 'info', 'fatal, error, warn, info, debug, trace or silent', { values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] }),
  logFormat: server('logFormat', 'DELAYQ_LOG_FORMAT', 'enum', 'auto', 'json, pretty (readable, for a terminal) or auto: pretty when stdout is a terminal, JSON otherwise', { values: ['auto', 'json', 'pretty'] }),
  logRequests: server('logRequests', 'DELAYQ_LOG_REQUESTS', 'boolean', false, 'log every request (1/true)'),
  shutdownTimeoutMs: server('shutdownTimeoutMs', 'DELAYQ_SHUTDOWN_TIMEOUT_MS', 'integer', 30_000, 'longest graceful stop before exiting anyway', { min: 0, max: 3_600_000 }),
  maxBatchBodyBytes: server('maxBatchBodyBytes', 'DELAYQ_MAX_BATCH_BODY_BYTES', 'integer', 32 * 1024 * 1024, 'largest batch request body', { min: 1024, max: 1024 * 1024 * 1024 }),
  maxReserve: server('maxReserve', 'DELAYQ_MAX_RESERVE', 'integer', 1_000, 'most tasks in one reserve (at most 1000)', { min: 1, max: 1_000 }),
  maxWaitMs: server('maxWaitMs', 'DELAYQ_MAX_WAIT_MS', 'integer', 60_000, 'longest reserve long-poll (at most 60000)', { min: 0, max: 60_000 }),
  maxLongPolls: server('maxLongPolls', 'DELAYQ_MAX_LONG_POLLS', 'integer', 10_000, 'long-polls waiting at once', { min: 1, max: 1_000_000 }),
  metricsPublic: server('metricsPublic', 'DELAYQ_METRICS_PUBLIC', 'boolean', false, 'serve GET /metrics without the token (1/true)'),
  ui: server('ui', 'DELAYQ_UI', 'boolean', true, 'serve the dashboard at /ui/ (--no-ui or 0/false to turn it off)'),
} as const satisfies Readonly<Record<string, OptionSpec>>;
