import { setTimeout as sleep } from 'node:timers/promises';
import { cli, startRedis } from '../../test/helpers/redis-servers.js';
import { spawnWorker } from '../processes.js';
import { base, type Row, type Run, runWorkers, scenario, type Scenario } from '../round.js';
import { clusterWithVictim } from '../servers.js';

async function clusterFailover(run: Run, waitReplicas: 0 | 1): Promise<Row> {
  const name = waitReplicas === 0 ? 'redis cluster: failover' : 'redis cluster: failover, waitReplicas=1';
  const faults = '3 masters + 3 replicas; a replica lags 1.5 s (SIGSTOP), then its master is SIGKILLed and the replica takes over';
  return scenario(run, name, faults, waitReplicas === 0 ? 'may-lose' : 'clean', async (round) => {
    const { cluster, servers, victim, replica } = await clusterWithVictim();
    try {
      const store = `${cluster.url}?prefix=cf${waitReplicas}&shards=16${waitReplicas ? `&waitReplicas=1&waitTimeoutMs=500` : ''}`;
      // Large payloads, so the replica's lag is more than the socket buffers hold.
      const workers = [0, 1].map((i) => spawnWorker(base(store, `c${i}`, { rate: 150, payloadBytes: 16 * 1024, ttrMs: 3_000 }), round));
      await Promise.all(workers.map((w) => w.ready));
      await sleep(run.short ? 2_000 : 4_000);
      replica.pause();
      await sleep(1_500);
      const killedAt = Date.now();
      await victim.kill();
      replica.resume();
      const deadline = Date.now() + 30_000;
      while (!cli(replica.port, 'INFO', 'replication').includes('role:master')) {
        if (Date.now() > deadline) throw new Error('the replica did not take over in 30 s');
        await sleep(50);
      }
      round.notes.push(`replica promoted ${((Date.now() - killedAt) / 1000).toFixed(1)} s after its master was killed`);
      // The old master comes back as a replica of the new one (so waitReplicas=1 can be met again).
      servers[0] = await startRedis({ cluster: true, port: victim.port, dir: victim.dir });
      await runWorkers(workers, round, run.short ? 3_000 : 6_000);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      for (const s of servers) s.remove();
    }
  });
}

export const clusterFailoverScenario: Scenario = { name: 'cluster-failover', needs: 'redis', run: (run) => clusterFailover(run, 0) };
export const clusterFailoverWaitScenario: Scenario = { name: 'cluster-failover-wait', needs: 'redis', run: (run) => clusterFailover(run, 1) };
