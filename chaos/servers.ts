/**
 * The servers a scenario runs against, started for its round and stopped after it: a
 * redis-server, a Redis Cluster with a victim master, a PostgreSQL cluster of the round's
 * own (initdb + pg_ctl on a free port in its temp dir; test/helpers/postgres-cluster.ts),
 * never the machine's server.
 */
import { startCluster as startPgCluster, type ClusterOptions, type PgCluster } from '../test/helpers/postgres-cluster.js';
import { cli, startCluster, startRedis, type RedisServer } from '../test/helpers/redis-servers.js';
import { PgProbe } from './postgres-rows.js';
import { pgClusters } from './processes.js';
import type { Round } from './round.js';

export async function withRedis<T>(options: Parameters<typeof startRedis>[0], body: (redis: RedisServer) => Promise<T>): Promise<T> {
  const redis = await startRedis(options);
  try {
    return await body(redis);
  } finally {
    await redis.stop();
    redis.remove();
  }
}

/** A cluster of 3 masters with a replica each; the victim is the first master, `replica` its replica. */
export async function clusterWithVictim(): Promise<{ cluster: Awaited<ReturnType<typeof startCluster>>; servers: RedisServer[]; victim: RedisServer; replica: RedisServer }> {
  const cluster = await startCluster(3, 1);
  const servers = [...cluster.servers];
  const victim = servers[0]!;
  const replica = servers.find((s) => cli(s.port, 'INFO', 'replication').includes(`master_port:${victim.port}`));
  if (!replica) {
    await cluster.stop();
    throw new Error('no replica of the first master');
  }
  return { cluster, servers, victim, replica };
}

/** The slot ranges a cluster node serves as master, read from its own CLUSTER NODES line. */
export function slotRanges(port: number): [number, number][] {
  const line = cli(port, 'CLUSTER', 'NODES').split('\n').find((l) => l.includes('myself'));
  if (!line) throw new Error(`node ${port} did not list itself in CLUSTER NODES`);
  return line
    .trim()
    .split(' ')
    .slice(8)
    .filter((f) => /^\d+(-\d+)?$/.test(f))
    .map((f) => {
      const [low, high] = f.split('-').map(Number);
      return [low!, high ?? low!];
    });
}

export const PG_SCHEMA = 'chaos';

/**
 * Starts the round's cluster (with `settings` beyond the defaults); scenario() removes it after
 * the verdict, SIGINT at once. The round's probe reads `schema` (delayq's, unless a peer's).
 */
export async function withPostgres(
  round: Round,
  body: (cluster: PgCluster, store: string) => Promise<void>,
  options: { readonly settings?: ClusterOptions['settings']; readonly schema?: string } = {},
): Promise<void> {
  const cluster = await startPgCluster(options.settings === undefined ? {} : { settings: options.settings });
  pgClusters.add(cluster);
  round.pg = { cluster, probe: new PgProbe(cluster.url, options.schema ?? PG_SCHEMA) };
  await body(cluster, `${cluster.url}?schema=${PG_SCHEMA}`);
}
