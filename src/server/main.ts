/**
 * The server process: parses the configuration, opens the DelayQueue, listens, and on
 * SIGTERM / SIGINT stops in order: stop accepting, end long-polls, finish the requests in
 * flight, then close the queue (which waits for its store writes). A request answered
 * with success is in the store before the process exits.
 *
 * Run through the CLI (`delayq serve`, `npm start`) or directly: `tsx src/server/main.ts --port 0`.
 */
import { own } from '../core/dict.js';
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Clock } from '../core/ports/index.js';
import { Registry } from 'prom-client';
import { DelayQueue } from '../open-queue.js';
import { destination as fileDestination } from 'pino';
import { buildApp } from './app.js';
import { ConfigError, SETTINGS, isLoopback, kebab, parseServerConfig, type ServerConfig, type ServerFlags } from './config.js';
import { startBanner, startFailure } from './banner.js';
import { holdPort } from './port-hold.js';
import { createServerLogger, redactingStream, resolveLogFormat } from './logger.js';

/** The serve settings, for the CLI (which may import only this module of the server). */
export { SETTINGS, kebab } from './config.js';

export interface RunningServer {
  /** Where it listens, e.g. http://127.0.0.1:7420 (the real port when asked for port 0). */
  readonly address: string;
  readonly app: FastifyInstance;
  readonly queue: DelayQueue;
  /** Graceful stop; idempotent. */
  stop(): Promise<void>;
}

/** `clock`: the queue's time, for tests (a ManualClock); the server's own timeouts stay on the system's. */
export async function startServer(config: ServerConfig, logger: Logger, clock?: Clock): Promise<RunningServer> {
  const { limits } = config;
  // The port first: one in use fails the start before the store creates or opens anything
  // (port-hold.ts). Port 0 asks for any free port: nothing to check.
  const held = config.port === 0 ? null : await holdPort(config.host, config.port);
  let queue: DelayQueue;
  try {
    queue = await DelayQueue.open({
      store: config.store,
      storeOptions: config.storeOptions,
      ...config.engine,
      limits: { maxPayloadBytes: limits.maxPayloadBytes, maxDelayMs: limits.maxDelayMs, maxBatch: limits.maxBatch },
      logger: logger.child({ component: 'queue' }),
      ...(clock !== undefined ? { clock } : {}),
      push: { allow: config.pushAllow },
      ...(config.pushSecret !== undefined ? { pushSecret: config.pushSecret } : {}),
      metrics: { registry: new Registry(), maxTopics: config.metricsMaxTopics, defaultMetrics: true },
    });
  } catch (error) {
    await held?.release();
    throw error;
  }
  let app: FastifyInstance;
  try {
    app = await buildApp({ queue, token: config.token, limits, logger, logRequests: config.logRequests, metrics: queue.metrics, metricsPublic: config.metricsPublic, ui: config.ui, allowHosts: config.allowHosts });
    // fastify's own "Server listening at" line would say half of the banner runServe prints.
    const level = app.log.level;
    if (logger.isLevelEnabled('info')) app.log.level = 'warn';
    try {
      await held?.release();
      await app.listen({ host: config.host, port: config.port });
    } finally {
      app.log.level = level;
    }
  } catch (error) {
    await held?.release();
    await queue.close();
    throw error;
  }
  const bound = app.server.address();
  const port = typeof bound === 'object' && bound !== null ? bound.port : config.port;
  const address = `http://${config.host.includes(':') && !config.host.startsWith('[') ? `[${config.host}]` : config.host}:${port}`;

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      const timeout = new Promise<'timeout'>((resolve) => setTimeout(resolve, config.shutdownTimeoutMs, 'timeout').unref());
      if ((await Promise.race([app.close().then(() => 'closed' as const), timeout])) === 'timeout') {
        logger.warn({ timeoutMs: config.shutdownTimeoutMs }, 'requests still running at the shutdown timeout; closing the queue anyway');
        app.server.closeAllConnections();
      }
      await queue.close();
    })();
    return stopping;
  };
  return { address, app, queue, stop };
}

/**
 * `delayq serve`: runs until SIGTERM / SIGINT. Returns the process exit code: 0 after a
 * clean stop, 1 if the server could not start, 2 for a bad configuration.
 */
export async function runServe(flags: ServerFlags, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let config: ServerConfig;
  try {
    config = parseServerConfig(flags, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // One problem, one line; several, one line each under the heading.
    const problems = error.problems.length === 1 ? `invalid configuration: ${error.problems[0] ?? ''}` : error.message;
    process.stderr.write(`delayq serve: ${problems}\n`);
    return 2;
  }
  const isTty = process.stdout.isTTY === true;
  const format = resolveLogFormat(config.logFormat, isTty);
  // Sync: an async destination is flushed at exit by a loop that never ends once the reader
  // has gone (sonic-boom's flushSync retries EPIPE forever), so `delayq serve | head` hung on
  // SIGTERM. The log is a few lines a minute unless --log-requests.
  const stdout = fileDestination({ dest: 1, sync: true });
  const logger = createServerLogger(config.logLevel, stdout, { format, colorize: isTty });
  let server: RunningServer;
  try {
    server = await startServer(config, logger);
  } catch (error) {
    const failure = startFailure(error, config);
    // A known failure is its one line; anything else keeps its stack, in the log.
    if (failure.known) logger.fatal({ code: (error as { code?: unknown }).code }, failure.line);
    else logger.fatal({ err: error }, failure.line);
    stdout.flushSync();
    process.stderr.write(`delayq serve: ${failure.line}\n`);
    return 1;
  }
  if (config.token === undefined && !isLoopback(config.host))
    logger.warn({ host: config.host }, 'no token and --allow-public: /v1 is open to anyone who can reach this address');
  // The signal handlers go in before the banner: whoever waits for the banner may stop the server at once.
  const stopped = new Promise<number>((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      // A second signal while draining means "now".
      process.once(signal, () => process.exit(1));
      logger.info({ signal }, 'stopping: no new requests; finishing the ones in flight');
      server.stop().then(
        () => {
          logger.info({}, 'stopped');
          resolve(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'stop failed');
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  const banner = startBanner(server.address, config.store, config);
  if (format === 'pretty' && logger.isLevelEnabled('info')) redactingStream(stdout).write(banner.text);
  else logger.info(banner.fields, 'delayq listening');
  return stopped;
}

/** Flags for a direct run of this file, with the same names as `delayq serve`. */
function parseDirectFlags(argv: string[]): ServerFlags {
  const options = Object.fromEntries(
    Object.values(SETTINGS).map((s) => [kebab(s.flag), { type: s.isSwitch ? ('boolean' as const) : ('string' as const) }]),
  );
  const { values } = parseArgs({ args: argv, options: { ...options, 'no-ui': { type: 'boolean' as const } }, strict: true });
  const given = values as Record<string, string | boolean | undefined>;
  const flags: Record<string, string | boolean | undefined> = Object.fromEntries(Object.values(SETTINGS).map((s) => [s.flag, own(given, kebab(s.flag))]));
  if (given['no-ui'] === true) flags['ui'] = false;
  return flags;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  let flags: ServerFlags;
  try {
    flags = parseDirectFlags(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`delayq serve: ${(error as Error).message}\n`);
    process.exit(2);
  }
  process.exitCode = await runServe(flags);
  process.exit();
}
