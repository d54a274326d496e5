/**
 * The fast tier's check, loaded with `--import` into each process of the fast tier's
 * `node --test` (scripts/run-tests.ts runs the fast files that way, in `npm test` and in
 * `npm run test:fast` alike). A fast test needs nothing outside its own process, so here:
 * - starting a child process (any function of node:child_process) and
 * - connecting a socket to anything but a server this process listens on (an HTTP server on
 *   an ephemeral port is fine; Redis, PostgreSQL or another process's port is not)
 * throw, print what was called and from where, and fail the file (exit code 1, whatever its
 * tests did with the error; a file still running 5 s later is ended). Such a test belongs
 * to another tier: it imports what it needs through node:child_process or a helper with a
 * `// test-needs:` line (scripts/test-tiers.ts), which moves it there.
 */
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

const listenedPorts = new Set<number>();
const listenedPaths = new Set<string>();
const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;
const ENDS_FILE_AFTER_MS = 5_000;

function refuse(what: string): Error {
  const error = new Error(
    `fast tier: ${process.argv[1] ?? 'this test file'} ${what}. A fast test runs nothing outside its own process: give the file the ` +
      'tier of what it needs (import it through node:child_process or a helper with a `// test-needs:` line; scripts/test-tiers.ts).',
  );
  process.stderr.write(`${error.stack ?? error.message}\n`);
  process.exitCode = 1;
  setTimeout(() => process.exit(1), ENDS_FILE_AFTER_MS).unref();
  return error;
}

const SPAWNERS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;
const spawners = childProcess as unknown as Record<(typeof SPAWNERS)[number], (...args: unknown[]) => unknown>;
for (const name of SPAWNERS) {
  spawners[name] = (...args: unknown[]): never => {
    throw refuse(`started a process (child_process.${name}(${JSON.stringify(args[0])}))`);
  };
}
// ESM imports of node:child_process read these bindings (those made already and later).
syncBuiltinESMExports();

const listen = Reflect.get(net.Server.prototype, 'listen') as (this: net.Server, ...args: unknown[]) => net.Server;
net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
  this.once('listening', () => {
    const address = this.address();
    if (typeof address === 'string') listenedPaths.add(address);
    else if (address !== null) listenedPorts.add(address.port);
  });
  return listen.apply(this, args);
} as typeof net.Server.prototype.listen;

interface Target {
  readonly port?: number;
  readonly host?: string;
  readonly path?: string;
}

/** Where a Socket#connect call goes: (options), (port[, host]), (path), or net's normalized [options, callback]. */
function targetOf(args: readonly unknown[]): Target {
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  if (typeof first === 'object' && first !== null) {
    const options = first as { port?: unknown; host?: unknown; path?: unknown };
    if (typeof options.path === 'string') return { path: options.path };
    return { port: Number(options.port), host: typeof options.host === 'string' ? options.host : 'localhost' };
  }
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) return { port: Number(first), host: typeof args[1] === 'string' ? args[1] : 'localhost' };
  return typeof first === 'string' ? { path: first } : {};
}

const connect = Reflect.get(net.Socket.prototype, 'connect') as (this: net.Socket, ...args: unknown[]) => net.Socket;
net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
  const target = targetOf(args);
  const ours =
    target.path !== undefined ? listenedPaths.has(target.path) : target.port !== undefined && listenedPorts.has(target.port) && LOOPBACK.test(target.host ?? '');
  if (!ours) throw refuse(`connected to ${target.path ?? `${target.host ?? '?'}:${String(target.port)}`}, which this process does not listen on`);
  return connect.apply(this, args);
};
