/**
 * The server's logger: pino, with every line passed through the URL redactor before it is
 * written (src/core/redact.ts), so no token in a push URL's query, no password in a store
 * URL and no query of a request reaches the log, whoever logged it and however (a field, a
 * message, an error's message or stack).
 */
import { destination as fileDestination, pino, type DestinationStream, type Logger } from 'pino';
import { redactUrlsIn } from '../core/redact.js';

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

export function createServerLogger(level: string, destination: DestinationStream = fileDestination(1)): Logger {
  return pino({ name: 'delayq', level, serializers: { req: requestForLog } }, redactingStream(destination));
}
