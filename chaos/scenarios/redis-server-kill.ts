import { setTimeout as sleep } from 'node:timers/promises';
import { startRedis } from '../../test/helpers/redis-servers.js';
import { spawnWorker } from '../processes.js';
import { base, type Row, type Run, runWorkers, scenario, type Scenario } from '../round.js';

async function redisServerKill(run: Run): Promise<Row> {
  return scenario(run, 'redis: redis-server SIGKILL', 'redis-server (AOF, appendfsync always) SIGKILLed and restarted on its data', 'clean', async (round) => {
    let redis = await startRedis({ appendonly: true });
    const { port, dir } = redis;
    try {
      const store = `${redis.url}?prefix=rk&shards=16`;
      const workers = [0, 1].map((i) => spawnWorker(base(store, `k${i}`, { rate: 150 }), round));
      await Promise.all(workers.map((w) => w.ready));
      const kills = run.short ? 1 : 2;
      for (let k = 0; k < kills; k++) {
        await sleep(run.short ? 2_500 : 4_000);
        await redis.kill();
        await sleep(1_000);
        redis = await startRedis({ appendonly: true, port, dir });
      }
      await runWorkers(workers, round, 3_000);
    } finally {
      await redis.stop();
      redis.remove();
    }
  });
}

export const redisServerKillScenario: Scenario = { name: 'redis-server-kill', needs: 'redis', run: redisServerKill };
