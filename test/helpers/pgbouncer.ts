/**
 * A pgbouncer of a test's own, in transaction mode (the mode that refuses startup
 * parameters and hands each transaction to whichever server connection is free), in front
 * of the test database: Debian's binary, on a free port, with a config file in a temp dir of
 * its own, started in the foreground as a child and stopped by its PID (never by name).
 * pgbouncer refuses to run as root: as root it runs as the `postgres` user, who then owns
 * that dir. Missing, it fails the test (never skips): `.ci/run` installs it.
 */
// test-needs: pgbouncer, postgres
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';
import { PG_URL } from './postgres.js';

const BINARY = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', ...(process.env['PATH'] ?? '').split(':').map((dir) => join(dir, 'pgbouncer'))].find((path) => existsSync(path));

export interface Pgbouncer {
  readonly port: number;
  /** The test database's URL through this pgbouncer, with `query` (the same user and database). */
  url(query?: Record<string, string>): string;
  /** Its log, for a failing test's message. */
  log(): string;
  /** SIGTERM to its PID, then SIGKILL if it has not exited within 5 s; the temp dir removed. */
  stop(): Promise<void>;
}

export async function startPgbouncer(): Promise<Pgbouncer> {
  if (BINARY === undefined) throw new Error("pgbouncer is not installed (apt-get install pgbouncer, as .ci/run does): the PostgreSQL store's pgbouncer tests need it");
  const target = new URL(PG_URL);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'delayq-pgbouncer-'));
  const user = decodeURIComponent(target.username || 'postgres');
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 500',
      'default_pool_size = 8',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  const root = userInfo().uid === 0;
  const postgresIds = root ? idsOf('postgres') : undefined;
  if (postgresIds !== undefined) chownSync(dir, postgresIds.uid, postgresIds.gid);
  const child: ChildProcess = spawn(BINARY, [join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'ignore', 'pipe'], ...(postgresIds ?? {}) });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const log = (): string => `${stderr}${existsSync(join(dir, 'pgbouncer.log')) ? readFileSync(join(dir, 'pgbouncer.log'), 'utf8') : ''}`;
  const url = (query: Record<string, string> = {}): string => {
    const through = new URL(PG_URL);
    through.hostname = '127.0.0.1';
    through.port = String(port);
    for (const [key, value] of Object.entries(query)) through.searchParams.set(key, value);
    return through.href;
  };
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      process.kill(child.pid, 'SIGTERM');
      const killer = setTimeout(() => child.pid !== undefined && process.kill(child.pid, 'SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // Up once it answers a query through it.
  const until = Date.now() + 10_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url() });
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (child.exitCode !== null || Date.now() > until) {
        await stop();
        throw new Error(`pgbouncer did not start on port ${port}: ${(error as Error).message}\n${log()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return { port, url, log, stop };
}

/** uid and gid of a local user, from /etc/passwd. */
function idsOf(name: string): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) throw new Error(`no user ${name} to run pgbouncer as (it refuses to run as root)`);
  return { uid: Number(uid), gid: Number(gid) };
}
