import { setTimeout as sleep } from 'node:timers/promises';
import { spawnWorker } from '../processes.js';
import { base, type Row, type Run, runWorkers, scenario, type Scenario } from '../round.js';
import { withRedis } from '../servers.js';

async function redisOwnerKill(run: Run): Promise<Row> {
  return scenario(run, 'redis: owner SIGKILL', 'one of 3 processes SIGKILLed; its shards taken over when its lease (5 s) runs out', 'clean', (round) =>
    withRedis({ appendonly: true }, async (redis) => {
      const store = `${redis.url}?prefix=own&shards=16`;
      const workers = [0, 1, 2].map((i) => spawnWorker(base(store, `o${i}`, { rate: 100 }), round));
      await Promise.all(workers.map((w) => w.ready));
      await sleep(run.short ? 2_000 : 4_000);
      workers[0]!.signal('SIGKILL');
      await runWorkers(workers.slice(1), round, run.short ? 7_000 : 10_000);
    }),
  );
}

export const redisOwnerKillScenario: Scenario = { name: 'redis-owner-kill', needs: 'redis', run: redisOwnerKill };
