/**
 * The server's logger: pino, with every line passed through the URL redactor before it is
 * written (src/core/redact.ts), so no token in a push URL's query, no password in a store
 * URL and no query of a request reaches the log, whoever logged it and however (a field, a
 * message, an error's message or stack).
 *
 * Two formats: `json` (one object per line, for collectors) and `pretty` (pino-pretty, for a
 * person at a terminal). The pretty lines are made from the redacted JSON line, so they are
 * redacted too. `auto` (the default) is pretty when stdout is a terminal, JSON otherwise.
 */
import { destination as fileDestination, pino, type DestinationStream, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { redactUrlsIn } from '../core/redact.js';
import type { LogFormatSetting } from './config.js';

export type LogFormat = 'json' | 'pretty';

/** The format `auto` stands for: pretty on a terminal, JSON otherwise. */
export function resolveLogFormat(setting: LogFormatSetting, isTty: boolean): LogFormat {
  return setting === 'auto' ? (isTty ? 'pretty' : 'json') : setting;
}

/** A request as the request log shows it: the path, never the query. */
function requestForLog(request: { method?: string; url?: string; ip?: string }): Record<string, unknown> {
  const url = request.url ?? '';
  const query = url.search(/[?#]/);
  return { method: request.method, url: query === -1 ? url : `${url.slice(0, query)}?<redacted>`, remoteAddress: request.ip };
}

/** Writes each line to `destination` with the URLs in it redacted. */
export function redactingStream(destination: DestinationStream): DestinationStream {
  return { write: (line: string) => destination.write(redactUrlsIn(line)) };
}

/** Writes each JSON line redacted, then made readable by pino-pretty. */
export function prettyRedactingStream(destination: DestinationStream, colorize: boolean): DestinationStream {
  const prettify = prettyFactory({ colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name', singleLine: false });
  return { write: (line: string) => destination.write(prettify(redactUrlsIn(line))) };
}

export interface ServerLoggerOptions {
  readonly format?: LogFormat;
  /** Pretty only: ANSI colours (default: on when the destination is a terminal). */
  readonly colorize?: boolean;
}

export function createServerLogger(level: string, destination: DestinationStream = fileDestination(1), options: ServerLoggerOptions = {}): Logger {
  const stream = options.format === 'pretty' ? prettyRedactingStream(destination, options.colorize ?? false) : redactingStream(destination);
  return pino({ name: 'delayq', level, serializers: { req: requestForLog } }, stream);
}
