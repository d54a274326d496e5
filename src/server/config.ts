/**
 * Server configuration from command-line flags and DELAYQ_* environment variables (flags
 * win), validated once at start. Every problem is reported at once, each naming the flag
 * and the variable, so a bad deployment fails with one clear message instead of later.
 */
import { isValidSecret } from '../core/push-input.js';
import { redactUrl } from '../core/redact.js';
import { parseAllowList } from '../push/allow-list.js';
import { storeKindOf, storeUsages } from '../stores/kinds.js';
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from './limits.js';


export interface ServerConfig {
  readonly store: string;
  readonly host: string;
  readonly port: number;
  readonly token: string | undefined;
  readonly allowPublic: boolean;
  /**
   * Without a token: Host names the guarded routes answer besides the loopback ones (DNS
   * rebinding, access.ts): the --allow-host entries, and the listening address when it is one.
   */
  readonly allowHosts: readonly string[];
  readonly logLevel: string;
  /** json, pretty, or auto (pretty when stdout is a terminal). */
  readonly logFormat: LogFormatSetting;
  readonly logRequests: boolean;
  /** How long a graceful stop may take before the process exits anyway. */
  readonly shutdownTimeoutMs: number;
  /** Addresses or CIDRs, each with an optional port, push may reach although the SSRF rules refuse them: local receivers. */
  readonly pushAllow: readonly string[];
  /** The default push secret: signs tasks with their own url on topics without a subscription. */
  readonly pushSecret: string | undefined;
  /** Serve GET /metrics without the token. */
  readonly metricsPublic: boolean;
  /** Topics with a metrics label of their own (the rest: topic="_other"). */
  readonly metricsMaxTopics: number;
  /** Serve the dashboard at /ui/. */
  readonly ui: boolean;
  readonly limits: ServerLimits;
}

/** Flag values as commander hands them over (strings, or true for switches). */
export type ServerFlags = Readonly<Record<string, string | boolean | undefined>>;

interface Setting {
  readonly flag: string;
  readonly env: string;
  readonly description: string;
  readonly default: string;
}

/** Every setting: the source of the CLI's `serve` options and of the table in docs/service.md. */
export const SETTINGS = {
  store: { flag: 'store', env: 'DELAYQ_STORE', description: `where tasks live: ${storeUsages()} (Redis options in the query: ?prefix=ns&shards=16)`, default: 'sqlite:./delayq.db' },
  host: { flag: 'host', env: 'DELAYQ_HOST', description: 'address to listen on', default: '127.0.0.1' },
  port: { flag: 'port', env: 'DELAYQ_PORT', description: 'port to listen on (0: any free port)', default: '7420' },
  token: { flag: 'token', env: 'DELAYQ_TOKEN', description: 'bearer token every /v1 request must carry', default: '' },
  allowPublic: { flag: 'allowPublic', env: 'DELAYQ_ALLOW_PUBLIC', description: 'allow a non-loopback host without a token (1/true)', default: 'false' },
  allowHost: {
    flag: 'allowHost',
    env: 'DELAYQ_ALLOW_HOST',
    description: 'without a token, comma-separated host names the API answers besides localhost, 127.0.0.1 and [::1] (its name behind a proxy, e.g. delayq.internal); any other Host is refused (DNS rebinding)',
    default: '',
  },
  logLevel: { flag: 'logLevel', env: 'DELAYQ_LOG_LEVEL', description: 'fatal, error, warn, info, debug, trace or silent', default: 'info' },
  logFormat: { flag: 'logFormat', env: 'DELAYQ_LOG_FORMAT', description: 'json, pretty (readable, for a terminal) or auto: pretty when stdout is a terminal, JSON otherwise', default: 'auto' },
  logRequests: { flag: 'logRequests', env: 'DELAYQ_LOG_REQUESTS', description: 'log every request (1/true)', default: 'false' },
  shutdownTimeoutMs: { flag: 'shutdownTimeoutMs', env: 'DELAYQ_SHUTDOWN_TIMEOUT_MS', description: 'longest graceful stop before exiting anyway', default: '30000' },
  maxPayloadBytes: { flag: 'maxPayloadBytes', env: 'DELAYQ_MAX_PAYLOAD_BYTES', description: 'largest task payload (serialised JSON)', default: String(DEFAULT_SERVER_LIMITS.maxPayloadBytes) },
  maxBatch: { flag: 'maxBatch', env: 'DELAYQ_MAX_BATCH', description: 'most tasks in one batch', default: String(DEFAULT_SERVER_LIMITS.maxBatch) },
  maxBatchBodyBytes: { flag: 'maxBatchBodyBytes', env: 'DELAYQ_MAX_BATCH_BODY_BYTES', description: 'largest batch request body', default: String(DEFAULT_SERVER_LIMITS.maxBatchBodyBytes) },
  maxDelayMs: { flag: 'maxDelayMs', env: 'DELAYQ_MAX_DELAY_MS', description: 'longest delay (default 10 years)', default: String(DEFAULT_SERVER_LIMITS.maxDelayMs) },
  maxReserve: { flag: 'maxReserve', env: 'DELAYQ_MAX_RESERVE', description: 'most tasks in one reserve (at most 1000)', default: String(DEFAULT_SERVER_LIMITS.maxReserve) },
  maxWaitMs: { flag: 'maxWaitMs', env: 'DELAYQ_MAX_WAIT_MS', description: 'longest reserve long-poll (at most 60000)', default: String(DEFAULT_SERVER_LIMITS.maxWaitMs) },
  pushAllow: { flag: 'pushAllow', env: 'DELAYQ_PUSH_ALLOW', description: 'comma-separated addresses or CIDRs, each with an optional :port (IPv6 in brackets), push may reach although the SSRF rules refuse them (local receivers, e.g. 127.0.0.1:8080,[::1]:9000)', default: '' },
  pushSecret: { flag: 'pushSecret', env: 'DELAYQ_PUSH_SECRET', description: 'default push secret (whsec_...): signs tasks scheduled with their own url on a topic without a push subscription', default: '' },
  metricsPublic: { flag: 'metricsPublic', env: 'DELAYQ_METRICS_PUBLIC', description: 'serve GET /metrics without the token (1/true)', default: 'false' },
  metricsMaxTopics: { flag: 'metricsMaxTopics', env: 'DELAYQ_METRICS_MAX_TOPICS', description: 'topics with a metrics label of their own; the rest are counted as topic="_other"', default: '100' },
  ui: { flag: 'ui', env: 'DELAYQ_UI', description: 'serve the dashboard at /ui/ (--no-ui or 0/false to turn it off)', default: 'true' },
  maxLongPolls: { flag: 'maxLongPolls', env: 'DELAYQ_MAX_LONG_POLLS', description: 'long-polls waiting at once', default: String(DEFAULT_SERVER_LIMITS.maxLongPolls) },
} as const satisfies Record<string, Setting>;

type SettingName = keyof typeof SETTINGS;

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** The log formats of --log-format (logger.ts). */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormatSetting = (typeof LOG_FORMATS)[number];

function isLogFormat(value: string): value is LogFormatSetting {
  return (LOG_FORMATS as readonly string[]).includes(value);
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export function parseServerConfig(flags: ServerFlags, env: NodeJS.ProcessEnv): ServerConfig {
  const problems: string[] = [];
  const raw = (name: SettingName): string | boolean => {
    const setting = SETTINGS[name];
    return flags[setting.flag] ?? env[setting.env] ?? setting.default;
  };
  const where = (name: SettingName): string => `--${kebab(SETTINGS[name].flag)} / ${SETTINGS[name].env}`;
  const text = (name: SettingName): string => String(raw(name));
  const bool = (name: SettingName): boolean => {
    const value = raw(name);
    if (typeof value === 'boolean') return value;
    if (/^(1|true|yes|on)$/i.test(value)) return true;
    if (/^(0|false|no|off|)$/i.test(value)) return false;
    problems.push(`${where(name)}: expected 1/true or 0/false (got "${value}")`);
    return false;
  };
  const int = (name: SettingName, min: number, max: number): number => {
    const value = text(name);
    const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) problems.push(`${where(name)}: expected an integer from ${min} to ${max} (got "${value}")`);
    return n;
  };

  // Parsed as the push transport will parse it, so a bad entry stops the start with its reason.
  const allowList = (name: SettingName): string[] => {
    const entries = text(name)
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part.length > 0);
    for (const entry of entries) {
      try {
        parseAllowList([entry]);
      } catch (error) {
        problems.push(`${where(name)}: ${error instanceof Error ? error.message.replace(/^pushAllow: /, '') : String(error)}`);
      }
    }
    return entries;
  };

  const store = text('store');
  const kind = storeKindOf(store);
  if (kind === undefined || (kind.name !== 'memory' && kind.schemes.includes(store)))
    problems.push(`${where('store')}: expected ${storeUsages()} (got "${redactUrl(store)}")`);
  const host = text('host');
  if (host.length === 0) problems.push(`${where('host')}: must not be empty`);
  const port = int('port', 0, 65_535);
  const tokenText = text('token');
  const token = tokenText.length > 0 ? tokenText : undefined;
  const allowPublic = bool('allowPublic');
  if (token === undefined && !allowPublic && host.length > 0 && !isLoopback(host))
    problems.push(
      `${where('host')}: refusing to listen on ${host} without a token; set --token / DELAYQ_TOKEN, ` +
        `or pass --allow-public / DELAYQ_ALLOW_PUBLIC=1 if anyone who can reach this address may use the queue`,
    );
  const allowHosts: string[] = [];
  for (const entry of text('allowHost').split(',').map((part) => part.trim()).filter((part) => part.length > 0)) {
    if (/^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$|^\[[0-9A-Fa-f:.]+\]$/.test(entry)) allowHosts.push(entry.toLowerCase());
    else problems.push(`${where('allowHost')}: expected host names or [IPv6] addresses without a port, comma-separated (got "${entry.slice(0, 100)}")`);
  }
  // The address it listens on names it too (a client that connects to 10.0.0.5 says so in Host).
  if (host.length > 0 && host !== '0.0.0.0' && host !== '::' && !isLoopback(host)) allowHosts.push((host.includes(':') && !host.startsWith('[') ? `[${host}]` : host).toLowerCase());
  const logLevel = text('logLevel');
  if (!LOG_LEVELS.has(logLevel)) problems.push(`${where('logLevel')}: expected one of ${[...LOG_LEVELS].join(', ')} (got "${logLevel}")`);

  const logFormat = text('logFormat');
  if (!isLogFormat(logFormat)) problems.push(`${where('logFormat')}: expected one of ${LOG_FORMATS.join(', ')} (got "${logFormat}")`);

  const pushSecret = text('pushSecret');
  if (pushSecret.length > 0 && !isValidSecret(pushSecret))
    problems.push(`${where('pushSecret')}: expected whsec_ followed by the base64 of 24 to 64 bytes (delayq push set prints one; the value is not shown)`);

  const limits: ServerLimits = {
    maxPayloadBytes: int('maxPayloadBytes', 1, 64 * 1024 * 1024),
    envelopeBytes: DEFAULT_SERVER_LIMITS.envelopeBytes,
    maxBatch: int('maxBatch', 1, 1_000_000),
    maxBatchBodyBytes: int('maxBatchBodyBytes', 1024, 1024 * 1024 * 1024),
    maxDelayMs: int('maxDelayMs', 1, Number.MAX_SAFE_INTEGER),
    maxReserve: int('maxReserve', 1, 1_000),
    maxWaitMs: int('maxWaitMs', 0, 60_000),
    maxLongPolls: int('maxLongPolls', 1, 1_000_000),
  };
  const config: ServerConfig = {
    store,
    host,
    port,
    token,
    allowPublic,
    allowHosts,
    logLevel,
    logFormat: isLogFormat(logFormat) ? logFormat : 'auto',
    logRequests: bool('logRequests'),
    shutdownTimeoutMs: int('shutdownTimeoutMs', 0, 3_600_000),
    pushAllow: allowList('pushAllow'),
    pushSecret: pushSecret.length > 0 ? pushSecret : undefined,
    metricsPublic: bool('metricsPublic'),
    metricsMaxTopics: int('metricsMaxTopics', 0, 100_000),
    ui: bool('ui'),
    limits,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

export function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
