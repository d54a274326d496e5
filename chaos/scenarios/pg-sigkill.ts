import { setTimeout as sleep } from 'node:timers/promises';
import { assertAlive, spawnWorker, stopWorker } from '../processes.js';
import { base, drain, pick, type Row, type Run, scenario, type Scenario } from '../round.js';
import { withPostgres } from '../servers.js';

/**
 * The lone delayq process SIGKILLed under load and started again, `kills` times: each new
 * process finds the shards leased to its dead predecessor until the lease runs out (4 s),
 * and the reservations it held, which the new owner expires.
 */
async function pgKills(run: Run, kills: number): Promise<Row> {
  return scenario(run, 'postgres: SIGKILL', `the one process SIGKILLed ${kills}x under load and started again (its shards' leases run out first)`, 'clean', (round) =>
    withPostgres(round, async (_cluster, store) => {
      for (let k = 0; k < kills; k++) {
        const worker = spawnWorker(base(store, `g${k}`), round);
        await worker.ready;
        await sleep(pick(1_000, 2_500));
        assertAlive([worker]);
        worker.signal('SIGKILL');
        await worker.exited;
      }
      const last = spawnWorker(base(store, 'last', { rate: 0 }), round);
      await last.ready;
      await drain(round);
      assertAlive([last]);
      await stopWorker(last);
    }),
  );
}

export const pgSigkillScenario: Scenario = { name: 'pg-sigkill', needs: 'postgres', run: (run) => pgKills(run, run.short ? 3 : 10) };
