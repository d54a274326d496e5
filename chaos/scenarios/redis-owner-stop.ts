import { setTimeout as sleep } from 'node:timers/promises';
import { spawnWorker } from '../processes.js';
import { base, type Row, type Run, runWorkers, scenario, type Scenario } from '../round.js';
import { withRedis } from '../servers.js';

async function redisOwnerStop(run: Run): Promise<Row> {
  return scenario(run, 'redis: owner SIGSTOP', 'one of 3 processes frozen (SIGSTOP) 7 s, past its 5 s lease, then SIGCONT', 'clean', (round) =>
    withRedis({ appendonly: true }, async (redis) => {
      const store = `${redis.url}?prefix=stp&shards=16`;
      const workers = [0, 1, 2].map((i) => spawnWorker(base(store, `p${i}`, { rate: 100 }), round));
      await Promise.all(workers.map((w) => w.ready));
      await sleep(run.short ? 2_000 : 4_000);
      workers[0]!.signal('SIGSTOP');
      await sleep(7_000);
      workers[0]!.signal('SIGCONT');
      await runWorkers(workers, round, run.short ? 3_000 : 6_000);
    }),
  );
}

export const redisOwnerStopScenario: Scenario = { name: 'redis-owner-stop', needs: 'redis', run: redisOwnerStop };
