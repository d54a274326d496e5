/** A real HTTP receiver on loopback for push tests: records what arrives, answers as told. */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export type Answer = (request: Received, response: ServerResponse) => void;

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly received: Received[];
  /** TCP connections accepted so far. */
  connections: number;
  answer: Answer;
  /** Resolves once `count` requests have arrived in all. */
  arrivals(count: number): Promise<void>;
  close(): Promise<void>;
}

export const answerWith =
  (status: number, body = '', headers: Record<string, string> = {}): Answer =>
  (_request, response) => {
    response.writeHead(status, headers).end(body);
  };

export async function startReceiver(host: '127.0.0.1' | '::1' = '127.0.0.1', answer: Answer = answerWith(204)): Promise<Receiver> {
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: Received = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      receiver.received.push(received);
      for (const waiter of waiters.filter((w) => receiver.received.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      receiver.answer(received, response);
    });
  });
  server.on('connection', () => {
    receiver.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/hook`,
    port,
    received: [],
    connections: 0,
    answer,
    arrivals: (count) => (receiver.received.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }))),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

/** A port nothing listens on: a server's, closed. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
