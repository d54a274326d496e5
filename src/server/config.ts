/**
 * Server configuration from command-line flags and DELAYQ_* environment variables (flags
 * win), validated once at start. Every option is a row of the options table
 * (src/core/option-table; docs/options.md is written from it): settings.ts reads each by its
 * row. Every problem is reported at once, each naming the flag and the variable, so a bad
 * deployment fails with one clear message instead of later.
 */
import { isValidSecret } from '../core/push-input.js';
import { redactUrl } from '../core/redact.js';
import { resolveTaskDefaults } from '../core/options.js';
import { ENGINE_OPTIONS, notReadBy, SERVER_OPTIONS, STORE_OPTIONS, type OptionValue, type StoreOptionName } from '../core/option-table/index.js';
import { isDelayQError } from '../core/errors.js';
import type { BackoffPolicy } from '../core/task/model.js';
import type { TaskDefaults } from '../core/task/validate.js';
import { parseAllowList } from '../push/allow-list.js';
import { storeKindOf, storeUsages } from '../stores/kinds.js';
import type { StoreOptions } from '../stores/open-store.js';
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from './limits.js';
import { SettingReader, type ServerFlags } from './settings.js';

export { SETTINGS, type ServerFlags } from './settings.js';
export { kebab } from '../core/option-table/index.js';

export interface ServerConfig {
  readonly store: string;
  /** The store options given by their flags or variables (only those given: the rest are the store's defaults). */
  readonly storeOptions: StoreOptions;
  /** The engine options given by flags or variables: retention and the defaults of tasks scheduled without their own. */
  readonly engine: { readonly retentionMs?: number; readonly purgeIntervalMs?: number; readonly events?: boolean; readonly defaults?: Partial<TaskDefaults> };
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

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** The log formats of --log-format (logger.ts). */
export const LOG_FORMATS = SERVER_OPTIONS.logFormat.values as readonly ('auto' | 'json' | 'pretty')[];
export type LogFormatSetting = 'auto' | 'json' | 'pretty';

function isLogFormat(value: string): value is LogFormatSetting {
  return (LOG_FORMATS as readonly string[]).includes(value);
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

const S = SERVER_OPTIONS;
const E = ENGINE_OPTIONS;
const HOST_NAME = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$|^\[[0-9A-Fa-f:.]+\]$/;

export function parseServerConfig(flags: ServerFlags, env: NodeJS.ProcessEnv): ServerConfig {
  const r = new SettingReader(flags, env);

  const store = r.text(S.store);
  const kind = storeKindOf(store);
  if (kind === undefined || (kind.name !== 'memory' && kind.schemes.includes(store)))
    r.problem(S.store, `expected ${storeUsages()} (got "${redactUrl(store)}")`);
  const host = r.text(S.host);
  if (host.length === 0) r.problem(S.host, 'must not be empty');
  const port = r.number(S.port);
  const tokenText = r.text(S.token);
  const token = tokenText.length > 0 ? tokenText : undefined;
  const allowPublic = r.bool(S.allowPublic);
  if (token === undefined && !allowPublic && host.length > 0 && !isLoopback(host))
    r.problem(
      S.host,
      `refusing to listen on ${host} without a token; set --token / DELAYQ_TOKEN, ` +
        `or pass --allow-public / DELAYQ_ALLOW_PUBLIC=1 if anyone who can reach this address may use the queue`,
    );
  const allowHosts: string[] = [];
  for (const entry of r.list(S.allowHost)) {
    if (HOST_NAME.test(entry)) allowHosts.push(entry.toLowerCase());
    else r.problem(S.allowHost, `expected host names or [IPv6] addresses without a port, comma-separated (got "${entry.slice(0, 100)}")`);
  }
  // The address it listens on names it too (a client that connects to 10.0.0.5 says so in Host).
  if (host.length > 0 && host !== '0.0.0.0' && host !== '::' && !isLoopback(host)) allowHosts.push((host.includes(':') && !host.startsWith('[') ? `[${host}]` : host).toLowerCase());
  const logLevel = r.text(S.logLevel);
  r.read(S.logLevel);
  const logFormat = r.text(S.logFormat);
  r.read(S.logFormat);

  const pushSecret = r.text(E.pushSecret);
  if (pushSecret.length > 0 && !isValidSecret(pushSecret))
    r.problem(E.pushSecret, 'expected whsec_ followed by the base64 of 24 to 64 bytes (delayq push set prints one; the value is not shown)');
  // Parsed as the push transport will parse it, so a bad entry stops the start with its reason.
  const pushAllow = r.list(E['push.allow']);
  for (const entry of pushAllow) {
    try {
      parseAllowList([entry]);
    } catch (error) {
      r.problem(E['push.allow'], error instanceof Error ? error.message.replace(/^pushAllow: /, '') : String(error));
    }
  }

  const limits: ServerLimits = {
    maxPayloadBytes: r.number(E['limits.maxPayloadBytes']),
    envelopeBytes: DEFAULT_SERVER_LIMITS.envelopeBytes,
    maxBatch: r.number(E['limits.maxBatch']),
    maxBatchBodyBytes: r.number(S.maxBatchBodyBytes),
    maxDelayMs: r.number(E['limits.maxDelayMs']),
    maxReserve: r.number(S.maxReserve),
    maxWaitMs: r.number(S.maxWaitMs),
    maxLongPolls: r.number(S.maxLongPolls),
  };
  const config: ServerConfig = {
    store,
    storeOptions: readStoreOptions(r, kind?.name),
    engine: readEngineOptions(r),
    host,
    port,
    token,
    allowPublic,
    allowHosts,
    logLevel,
    logFormat: isLogFormat(logFormat) ? logFormat : 'auto',
    logRequests: r.bool(S.logRequests),
    shutdownTimeoutMs: r.number(S.shutdownTimeoutMs),
    pushAllow,
    pushSecret: pushSecret.length > 0 ? pushSecret : undefined,
    metricsPublic: r.bool(S.metricsPublic),
    metricsMaxTopics: r.number(E['metrics.maxTopics']),
    ui: r.bool(S.ui),
    limits,
  };
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

/** The store options given; one the store named by --store does not read is a problem, not ignored. */
function readStoreOptions(r: SettingReader, kind: 'memory' | 'sqlite' | 'redis' | 'postgres' | undefined): StoreOptions {
  const options: Partial<Record<StoreOptionName, OptionValue>> = {};
  for (const [name, option] of Object.entries(STORE_OPTIONS) as [StoreOptionName, (typeof STORE_OPTIONS)[StoreOptionName]][]) {
    const value = r.read(option);
    if (value === undefined) continue;
    if (kind !== undefined && !(option.scope as readonly string[]).includes(kind)) r.problem(option, notReadBy(name, option, kind));
    else options[name] = value;
  }
  return options as StoreOptions;
}

/** Retention, the purge's period and the task defaults, checked by the engine's own resolver (backoff.maxMs >= baseMs, ttrMs within limits). */
function readEngineOptions(r: SettingReader): ServerConfig['engine'] {
  const retentionMs = r.read(E.retentionMs) as number | undefined;
  const purgeIntervalMs = r.read(E.purgeIntervalMs) as number | undefined;
  const events = r.read(E.events) as boolean | undefined;
  const ttrMs = r.read(E['defaults.ttrMs']) as number | undefined;
  const maxAttempts = r.read(E['defaults.maxAttempts']) as number | undefined;
  const backoff: Partial<Record<keyof BackoffPolicy, number>> = {};
  for (const key of ['baseMs', 'factor', 'maxMs', 'jitter'] as const) {
    const value = r.read(E[`defaults.backoff.${key}`]) as number | undefined;
    if (value !== undefined) backoff[key] = value;
  }
  const defaults: Partial<TaskDefaults> = {
    ...(ttrMs !== undefined ? { ttrMs } : {}),
    ...(maxAttempts !== undefined ? { maxAttempts } : {}),
    ...(Object.keys(backoff).length > 0 ? { backoff: backoff as BackoffPolicy } : {}),
  };
  try {
    resolveTaskDefaults(defaults);
  } catch (error) {
    if (!isDelayQError(error)) throw error;
    const field = typeof error.details?.['field'] === 'string' ? error.details['field'] : '';
    const option = Object.values(E).find((o) => o.library === `defaults.${field}` || o.library === field) ?? E['defaults.ttrMs'];
    r.problem(option, error.message);
  }
  return {
    ...(retentionMs !== undefined ? { retentionMs } : {}),
    ...(purgeIntervalMs !== undefined ? { purgeIntervalMs } : {}),
    ...(events !== undefined ? { events } : {}),
    ...(Object.keys(defaults).length > 0 ? { defaults } : {}),
  };
}
