/**
 * Starts throwaway redis-server processes for tests and benchmarks: free ports, their own
 * temp data directories, stopped by PID (never by name; the machine's own Redis on 6379
 * is never touched). Without the binaries a Redis test fails, naming the package to install.
 */
// test-needs: redis
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { buildKeyspace } from '../../src/stores/redis/keys.js';
import { shardOf } from '../../src/coordination/router.js';
import type { SharedBacking } from '../../src/testing/shared-conformance.js';
import { freePort } from './ports.js';
import { after, before } from 'node:test';

function findBinary(name: string): string | null {
  for (const dir of (process.env['PATH'] ?? '').split(':').concat(['/usr/bin', '/usr/local/bin'])) {
    const path = join(dir, name);
    if (dir && existsSync(path)) return path;
  }
  return null;
}

export const REDIS_SERVER = findBinary('redis-server');
export const REDIS_CLI = findBinary('redis-cli');

const INSTALL = 'apt-get install redis-server redis-tools';

/** Why Redis servers cannot be started here (with the command that installs them), or null. */
export function redisMissing(): string | null {
  return REDIS_SERVER && REDIS_CLI ? null : `redis-server / redis-cli not found on PATH, /usr/bin or /usr/local/bin: install them (${INSTALL}), as .ci/run does`;
}

/**
 * For node:test's `{ skip }`: always false, since a Redis test never skips; without the
 * binaries it throws, and the file fails with the install command.
 */
export function redisSkip(): false {
  const missing = redisMissing();
  if (missing !== null) throw new Error(missing);
  return false;
}

export { freePort } from './ports.js';

export interface RedisServerOptions {
  readonly appendonly?: boolean;
  readonly cluster?: boolean;
  readonly maxmemoryPolicy?: string;
  /** Reuse a data dir (a restart). */
  readonly dir?: string;
  readonly port?: number;
  /** Start as a replica of the master on this port (`--replicaof`); resolves once its link is up. */
  readonly replicaOf?: number;
  readonly extraArgs?: readonly string[];
}

export interface RedisServer {
  readonly port: number;
  readonly dir: string;
  readonly url: string;
  readonly pid: number;
  /** SIGTERM (Redis saves/flushes), then waits for the exit. */
  stop(): Promise<void>;
  /** SIGKILL: a crash. */
  kill(): Promise<void>;
  /** SIGSTOP: frozen (no answers, connections kept); `resume` sends SIGCONT. */
  pause(): void;
  resume(): void;
  /** Removes the data dir (after stop). */
  remove(): void;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export function cli(port: number, ...args: string[]): string {
  const result = spawnSync(REDIS_CLI ?? 'redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8' });
  return `${result.stdout}${result.stderr}`;
}

/**
 * Adds the user `mute` (password `mute-pw`) who may run every command but PUBLISH, and
 * answers its URL: the notices of a process connected as it are lost (the lost-notice tests).
 */
export function addMuteUser(port: number): string {
  cli(port, 'ACL', 'SETUSER', 'mute', 'on', '>mute-pw', '~*', '&*', '+@all', '-publish');
  return `redis://mute:mute-pw@127.0.0.1:${port}`;
}

/** A redis-server of its own for the enclosing describe (started before, stopped after), with the mute user; read its fields in the tests. */
export function redisWithMuteUser(): { readonly url: string; readonly muteUrl: string } {
  let server: RedisServer | undefined;
  let muteUrl = '';
  before(async () => {
    server = await startRedis();
    muteUrl = addMuteUser(server.port);
  });
  after(async () => {
    await server?.stop();
    server?.remove();
  });
  return {
    get url() {
      return server!.url;
    },
    get muteUrl() {
      return muteUrl;
    },
  };
}

/**
 * The least a delayq store needs of a Redis user (docs/redis.md, "Least privilege"): its
 * prefix's keys and channels, and every command but the dangerous and admin ones, with INFO
 * given back (ioredis' ready check after a restart, and the eviction check, read it).
 */
export const LEAST_PRIVILEGE_RULES = (prefix: string): string[] => [`~${prefix}:*`, `&${prefix}:*`, '+@all', '-@dangerous', '-@admin', '+info'];

/** Adds (or resets) user `prefix` with password `<prefix>-pw` and the least privilege for that prefix; its auth for a URL. */
export function addLeastPrivilegeUser(port: number, prefix: string, rules = LEAST_PRIVILEGE_RULES(prefix)): string {
  cli(port, 'ACL', 'SETUSER', prefix, 'reset', 'on', `>${prefix}-pw`, ...rules);
  return `${prefix}:${prefix}-pw`;
}

export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'delayq-redis-'));
  const args = [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--daemonize', 'no',
    '--protected-mode', 'no', '--maxmemory-policy', options.maxmemoryPolicy ?? 'noeviction', '--loglevel', 'warning',
    '--appendonly', options.appendonly ? 'yes' : 'no', '--appendfsync', 'always',
  ];
  if (options.replicaOf !== undefined) args.push('--replicaof', '127.0.0.1', String(options.replicaOf));
  if (options.cluster) args.push('--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf'), '--cluster-node-timeout', '2000');
  args.push(...(options.extraArgs ?? []));
  const child = spawn(REDIS_SERVER ?? 'redis-server', args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const deadline = Date.now() + 10_000;
  while (!cli(port, 'PING').includes('PONG')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server on port ${port} did not start`);
    await sleep(20);
  }
  // AOF loading: PING answers LOADING until the data is back.
  while (cli(port, 'INFO', 'persistence').includes('loading:1')) await sleep(20);
  if (options.replicaOf !== undefined)
    while (!cli(port, 'INFO', 'replication').includes('master_link_status:up')) {
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not reach its master ${options.replicaOf}`);
      await sleep(20);
    }
  return {
    port,
    dir,
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid ?? -1,
    pause() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGSTOP');
    },
    resume() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGCONT');
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited(child);
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited(child);
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RedisCluster {
  readonly servers: readonly RedisServer[];
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * N masters, slots split evenly by `redis-cli --cluster create`, and `replicas` replicas of
 * each (servers[0..N-1] are the masters, then their replicas; which replica follows which
 * master is redis-cli's choice: ask CLUSTER NODES).
 */
export async function startCluster(masters = 3, replicas = 0, options: Omit<RedisServerOptions, 'cluster'> = {}): Promise<RedisCluster> {
  const servers = await Promise.all(Array.from({ length: masters * (1 + replicas) }, () => startRedis({ ...options, cluster: true })));
  const nodes = servers.map((s) => `127.0.0.1:${s.port}`);
  const created = spawnSync(REDIS_CLI ?? 'redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', String(replicas), '--cluster-yes'], {
    encoding: 'utf8',
  });
  if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
  const deadline = Date.now() + 20_000;
  while (!servers.every((s) => cli(s.port, 'CLUSTER', 'INFO').includes('cluster_state:ok'))) {
    if (Date.now() > deadline) throw new Error('the cluster did not reach cluster_state:ok');
    await sleep(50);
  }
  // Every replica synced with its master.
  if (replicas > 0)
    while (!servers.slice(masters).every((s) => cli(s.port, 'INFO', 'replication').includes('master_link_status:up'))) {
      if (Date.now() > deadline) throw new Error('the cluster replicas did not sync');
      await sleep(50);
    }
  return {
    servers,
    url: `redis+cluster://${nodes.join(',')}`,
    async stop() {
      await Promise.all(servers.map((s) => s.stop()));
      for (const s of servers) s.remove();
    },
  };
}

/**
 * A shared-conformance backing on real Redis servers (one, or every node of a cluster) where
 * each namespace is a user of its own, so that one partition can be made to refuse writes:
 * an ACL selector lets the user read every key and write all but that shard's
 * (`%R~*` plus `%RW~` per writable shard and the meta slot). ACL changes apply to the
 * user's open connections at once.
 */
export function aclBacking(
  ports: () => readonly number[],
  url: (auth: string) => string,
  shards: number,
): Pick<SharedBacking, 'namespace' | 'refuseWrites' | 'partitionOf' | 'send'> {
  let namespaces = 0;
  const setUser = (prefix: string, ...rules: string[]): void => {
    for (const port of ports()) cli(port, 'ACL', 'SETUSER', prefix, ...rules);
  };
  return {
    namespace: async () => {
      const prefix = `acl${++namespaces}x${process.pid}`;
      setUser(prefix, 'reset', 'on', `>${prefix}-pw`, ...LEAST_PRIVILEGE_RULES(prefix));
      return { url: url(`${prefix}:${prefix}-pw`), storeOptions: { prefix, shards } };
    },
    refuseWrites: async (space, partition) => {
      const prefix = space.storeOptions['prefix'] as string;
      const keys = buildKeyspace(prefix, shards);
      const writable = [keys.meta, ...keys.shards.filter((s) => s.index !== partition).map((s) => s.pool)].map((key) => `%RW~${key.slice(0, key.lastIndexOf(':'))}:*`);
      setUser(prefix, 'resetkeys', '%R~*', ...writable);
      return async () => setUser(prefix, 'resetkeys', `~${prefix}:*`);
    },
    partitionOf: (_space, id) => shardOf(id, shards),
    // Any client may PUBLISH: here the server's default user, on a connection of its own.
    send: async (space, channel, message, topic) => {
      const keys = buildKeyspace(space.storeOptions['prefix'] as string, shards);
      const client = new Redis({ host: '127.0.0.1', port: ports()[0]!, lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await client.connect();
        await client.publish(channel === 'timers' ? keys.timerChannel : keys.readyChannel(topic), message);
      } finally {
        client.disconnect();
      }
    },
  };
}
