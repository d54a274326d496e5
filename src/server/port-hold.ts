/**
 * The server's port, taken before anything else starts: `delayq serve` binds host:port
 * first and holds it while the store opens, so a port in use (or a host or port it may not
 * listen on) fails the start before the store has created or changed anything (a new SQLite
 * file, its WAL and lock file; an existing one is not even opened). Once the queue and the
 * app are ready the hold is let go and fastify listens on the same address at once: the
 * only window another process could take the port in is that one step.
 *
 * While held, a connection is closed as soon as it comes: the server is not up yet, as when
 * nothing listened.
 */
import { createServer, type Server } from 'node:net';

export interface HeldPort {
  /** Lets the port go (resolves once it is free for the real listen). Idempotent. */
  release(): Promise<void>;
}

/** Binds `host:port`, rejecting with listen's own error (EADDRINUSE, EACCES, EADDRNOTAVAIL...). */
export async function holdPort(host: string, port: number): Promise<HeldPort> {
  const server: Server = createServer({ pauseOnConnect: true }, (socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  let released: Promise<void> | null = null;
  return {
    release: () => (released ??= new Promise<void>((resolve) => server.close(() => resolve()))),
  };
}
