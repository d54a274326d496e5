import { setTimeout as sleep } from 'node:timers/promises';
import { startRedis } from '../../test/helpers/redis-servers.js';
import { assertAlive, spawnWorker } from '../processes.js';
import { base, readFacts, type Row, type Run, runWorkers, scenario, type Scenario } from '../round.js';
import { rejectionProblems } from '../readings.js';

/**
 * redis-server frozen (SIGSTOP): its connections stay open and nothing answers, so only the
 * store's callTimeoutMs (1 s here) fails the calls made meanwhile; commands in flight run
 * when it wakes (a reserve then holds its tasks until their ttr runs out).
 */
async function redisServerStop(run: Run): Promise<Row> {
  const stopMs = 3_000;
  return scenario(run, 'redis: redis-server SIGSTOP', `redis-server frozen (SIGSTOP) ${stopMs / 1000} s, past the store's callTimeoutMs (1 s), then SIGCONT`, 'clean', async (round) => {
    const redis = await startRedis({ appendonly: true });
    try {
      const store = `${redis.url}?prefix=rs&shards=16&callTimeoutMs=1000`;
      const workers = [0, 1].map((i) => spawnWorker(base(store, `f${i}`, { rate: 150 }), round));
      await Promise.all(workers.map((w) => w.ready));
      const stops = run.short ? 1 : 2;
      const windows: { from: number; to: number }[] = [];
      for (let k = 0; k < stops; k++) {
        await sleep(run.short ? 2_500 : 4_000);
        const from = Date.now();
        redis.pause();
        await sleep(stopMs);
        redis.resume();
        windows.push({ from, to: Date.now() });
      }
      await sleep(2_000);
      assertAlive(workers);
      readFacts(round);
      // Each producer was refused while the server was frozen, each refusal within about the
      // timeout, and with STORE_UNAVAILABLE: the calls failed instead of hanging.
      const problems = rejectionProblems(round);
      for (const [i, w] of windows.entries())
        for (const name of ['f0', 'f1']) {
          const frozen = round.workerFacts.get(name)!.errors.filter((e) => e.op === 'schedule' && e.at >= w.from && e.at <= w.to + 1_000);
          const slowest = Math.max(0, ...frozen.map((e) => e.ms));
          round.notes.push(`stop ${i + 1}, ${name}: ${frozen.length} schedule calls rejected while frozen, slowest ${slowest} ms`);
          if (frozen.length === 0) problems.push(`stop ${i + 1}: ${name}'s producer saw no rejection while the server was frozen (a hang?)`);
          if (slowest > 2_500) problems.push(`stop ${i + 1}: a schedule call of ${name} took ${slowest} ms to reject (callTimeoutMs is 1,000)`);
        }
      if (problems.length > 0) throw new Error(problems.join('; '));
      await runWorkers(workers, round, 3_000);
    } finally {
      redis.resume();
      await redis.stop();
      redis.remove();
    }
  });
}

export const redisServerStopScenario: Scenario = { name: 'redis-server-stop', needs: 'redis', run: redisServerStop };
