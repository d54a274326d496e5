/**
 * HTTP/1.1 over a bare socket: the request target goes out exactly as written (no client
 * normalises dot segments, escapes or absolute forms away), as an attacker would send it.
 */
import { connect } from 'node:net';

export interface RawRequest {
  readonly method: string;
  /** The request target as it goes on the wire: a path, an absolute URL, `*`. */
  readonly target: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Send no Host header at all (HTTP/1.1 requires one). */
  readonly noHost?: boolean;
  /** The HTTP version on the request line: 1.1 unless said. */
  readonly version?: '1.0' | '1.1';
}

export interface RawAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
}

/** Sends one request on its own connection and reads the answer until the server closes it. */
export function rawRequest(port: number, request: RawRequest, timeoutMs = 10_000): Promise<RawAnswer> {
  const headers: Record<string, string> = { ...(request.noHost === true ? {} : { host: `127.0.0.1:${port}` }), connection: 'close', ...request.headers };
  if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body));
  const head = `${request.method} ${request.target} HTTP/${request.version ?? '1.1'}\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
  return new Promise((resolve, reject) => {
    // write, not end: a half-closed socket makes Node drop a streamed answer (a static file).
    const socket = connect(port, '127.0.0.1', () => socket.write(head + (request.body ?? '')));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error(`no answer to ${request.method} ${request.target} within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const lines = (split === -1 ? raw : raw.slice(0, split)).split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? NaN);
      if (Number.isNaN(status)) {
        reject(new Error(`no HTTP answer to ${request.method} ${request.target}: ${JSON.stringify(raw.slice(0, 200))}`));
        return;
      }
      const answerHeaders: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) answerHeaders[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let text = split === -1 ? '' : raw.slice(split + 4);
      if (answerHeaders['transfer-encoding'] === 'chunked') text = unchunk(text);
      resolve({ status, headers: answerHeaders, text });
    });
  });
}

function unchunk(text: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const end = text.indexOf('\r\n', at);
    if (end === -1) return out;
    const size = parseInt(text.slice(at, end), 16);
    if (!(size > 0)) return out;
    out += text.slice(end + 2, end + 2 + size);
    at = end + 2 + size + 2;
  }
}

/** Is this body our error envelope, {error: {code, message}}? */
export function isEnvelope(text: string): boolean {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    return typeof body.error?.code === 'string' && typeof body.error.message === 'string';
  } catch {
    return false;
  }
}
