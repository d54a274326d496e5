/**
 * A PostgreSQL cluster of a test's own, for the tests that stop or crash the server: its
 * own data directory under the temp dir, initdb'd, started with pg_ctl on a free port with
 * its socket in that directory, stopped by `pg_ctl stop` on that directory (never by name;
 * the machine's server on 5432 is never touched), and removed after. The binaries are
 * PostgreSQL 15's (`.ci/run` installs them when missing; else the first pg_ctl and initdb on
 * PATH). `remove()` is synchronous, so a runner's SIGINT handler can call it (the server,
 * started by pg_ctl, is in a session of its own: a Ctrl-C does not reach it). PostgreSQL refuses to run as
 * root: as root, each command runs as the `postgres` user (runuser), which owns the dir.
 */
// test-needs: postgres-bin
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

const BIN = ['/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/17/bin', ...(process.env['PATH'] ?? '').split(':')].find(
  (dir) => dir !== '' && existsSync(join(dir, 'pg_ctl')) && existsSync(join(dir, 'initdb')),
);

export interface PgCluster {
  readonly port: number;
  readonly url: string;
  /** The temp directory: data/, the socket, and the server's log (`log`). */
  readonly dir: string;
  /** `pg_ctl stop -m immediate`: the server dies as in a crash, without a checkpoint. */
  crash(): void;
  /** Starts it again on the same port and data (after `crash`). */
  start(): void;
  /** Whether the server is up (its postmaster.pid exists). */
  running(): boolean;
  /**
   * SIGSTOP to the postmaster and every process it started: a server that hangs, its
   * connections open and silent (as a frozen VM or a network dropping packets looks).
   */
  freeze(): void;
  /** SIGCONT to the same processes (and any started since). */
  thaw(): void;
  /** Stops (immediate) if running and removes the directory; once, and never throws. */
  remove(): void;
}

/** Why a cluster cannot be started here (with the command that installs the binaries), or null. */
export function postgresBinariesMissing(): string | null {
  return BIN === undefined ? 'PostgreSQL server binaries (initdb, pg_ctl) not found under /usr/lib/postgresql/<15|16|17>/bin or on PATH: install them (apt-get install postgresql), as .ci/run does' : null;
}

export function postgresBinaries(): string {
  if (BIN === undefined) throw new Error(postgresBinariesMissing() ?? '');
  return BIN;
}

function run(command: string, args: readonly string[], asPostgres: boolean): string {
  const [file, argv] = asPostgres ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, [...args]];
  const result = spawnSync(file, argv, { encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${String(result.status)}): ${result.stderr}${result.stdout}`);
  return result.stdout;
}

/**
 * Server settings beyond the defaults, each passed as `-c name=value` at every start (the chaos
 * cells' max_connections, pg_stat_statements and auto_explain). Names and values are the
 * caller's own constants: they go to pg_ctl's command line as they are.
 */
export interface ClusterOptions {
  readonly settings?: Readonly<Record<string, string | number>>;
}

export async function startCluster(options: ClusterOptions = {}): Promise<PgCluster> {
  const bin = postgresBinaries();
  const asPostgres = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'delayq-pg-'));
  const data = join(dir, 'data');
  if (asPostgres) {
    const ids = run('id', ['-u', 'postgres'], false).trim();
    const gid = run('id', ['-g', 'postgres'], false).trim();
    chownSync(dir, Number(ids), Number(gid));
    chmodSync(dir, 0o700);
  }
  const port = await freePort();
  run(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'], asPostgres);
  const settings = Object.entries(options.settings ?? {}).map(([name, value]) => {
    if (!/^[a-z_.]+$/.test(name) || !/^[A-Za-z0-9_.,:-]+$/.test(String(value))) throw new Error(`startCluster: a setting must be a plain name and value, got ${name}=${String(value)}`);
    return ` -c ${name}=${String(value)}`;
  });
  const serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on${settings.join('')}`;
  const start = (): void => void run(join(bin, 'pg_ctl'), ['-D', data, '-o', serverOptions, '-l', join(dir, 'log'), '-w', '-t', '60', 'start'], asPostgres);
  const crash = (): void => void run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], asPostgres);
  const running = (): boolean => existsSync(join(data, 'postmaster.pid'));
  // The postmaster's pid is the first line of postmaster.pid; its children are read from /proc.
  const processes = (): number[] => {
    const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .filter((pid) => {
        try {
          // /proc/<pid>/stat: "pid (comm) state ppid ...": the comm may hold spaces, so split after ')'.
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
        } catch {
          return false;
        }
      })
      .map(Number);
    return [postmaster, ...children];
  };
  const signal = (sig: NodeJS.Signals): void => {
    for (const pid of processes()) {
      try {
        process.kill(pid, sig);
      } catch {
        // Gone meanwhile (a backend that ended).
      }
    }
  };
  const freeze = (): void => signal('SIGSTOP');
  const thaw = (): void => signal('SIGCONT');
  let removed = false;
  const remove = (): void => {
    if (removed) return;
    removed = true;
    try {
      // A frozen server would hold pg_ctl's stop until its timeout.
      if (running()) thaw();
    } catch {
      // Nothing to wake.
    }
    try {
      if (running()) crash();
    } catch {
      // Already stopping or gone: the directory goes either way.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    start();
  } catch (error) {
    remove();
    throw error;
  }
  return { port, url: `postgres://postgres@127.0.0.1:${port}/postgres`, dir, crash, start, running, freeze, thaw, remove };
}
