import { setTimeout as sleep } from 'node:timers/promises';
import { assertAlive, spawnWorker } from '../processes.js';
import { base, readFacts, type Row, type Run, runWorkers, scenario, type Scenario } from '../round.js';
import { rejectionProblems } from '../readings.js';
import { withPostgres } from '../servers.js';

/**
 * `pg_ctl stop -m immediate` under load (a crash: no checkpoint, every connection cut),
 * down `downMs`, then started again on its port and data dir, `crashes` times, while two
 * delayq processes run on: neither is restarted. Beyond the checker, it asserts what the
 * processes' callers saw: while the server was down every rejected call rejected with
 * STORE_UNAVAILABLE, each producer kept being answered (rejected within seconds, the last
 * rejection near the restart: no hang), and after the restart each process scheduled and
 * delivered again by itself.
 */
async function pgRestart(run: Run, crashes: number, downMs: number): Promise<Row> {
  const faults = `pg_ctl stop -m immediate under load, down ${downMs / 1000} s, started again on its port and data (${crashes}x); the 2 delayq processes run on`;
  return scenario(run, 'postgres: server crash, restart', faults, 'clean', (round) =>
    withPostgres(round, async (cluster, store) => {
      const names = ['r0', 'r1'];
      const workers = names.map((name) => spawnWorker(base(store, name, { rate: 100 }), round));
      await Promise.all(workers.map((w) => w.ready));
      const windows: { downAt: number; upAt: number; startedAt: number }[] = [];
      for (let c = 0; c < crashes; c++) {
        await sleep(run.short ? 2_500 : 4_000);
        const downAt = Date.now();
        cluster.crash();
        await sleep(downMs);
        const upAt = Date.now();
        cluster.start();
        windows.push({ downAt, upAt, startedAt: Date.now() });
      }
      const lastUp = windows.at(-1)!.startedAt;
      // Long enough past the restart for schedules made after it to fall due (runAt <= now + maxDelayMs).
      await sleep(run.short ? 4_000 : 6_000);
      assertAlive(workers);
      readFacts(round);
      const problems = rejectionProblems(round);
      for (const [i, w] of windows.entries()) {
        for (const name of names) {
          const own = round.workerFacts.get(name)!;
          const down = own.errors.filter((e) => e.op === 'schedule' && e.at >= w.downAt && e.at <= w.startedAt);
          const slowest = Math.max(0, ...down.map((e) => e.ms));
          const lastAt = Math.max(0, ...down.map((e) => e.at));
          round.notes.push(
            `crash ${i + 1}, ${name}: ${down.length} schedule calls rejected while down (the first ${down.length === 0 ? '-' : `${down[0]!.at - w.downAt} ms after the stop`}, slowest ${slowest} ms, the last ${down.length === 0 ? '-' : `${w.startedAt - lastAt} ms before the server took connections again`})`,
          );
          if (down.length === 0) problems.push(`crash ${i + 1}: ${name}'s producer saw no STORE_UNAVAILABLE while the server was down (a hang?)`);
          else if (w.startedAt - lastAt > 2_500) problems.push(`crash ${i + 1}: ${name}'s producer got no answer in the last ${w.startedAt - lastAt} ms of the outage (a hang?)`);
          if (slowest > 5_000) problems.push(`crash ${i + 1}: a schedule call of ${name} took ${slowest} ms to reject`);
        }
      }
      const maxDelay = base(store, '').maxDelayMs;
      for (const name of names) {
        const own = round.workerFacts.get(name)!;
        // runAt = creation + [0, maxDelayMs]: a runAt past lastUp + maxDelayMs was created after the restart.
        const after = [...own.scheduled.values()].filter((runAt) => runAt > lastUp + maxDelay).length;
        const delivered = own.deliveries.filter((d) => d.at > lastUp).length;
        round.notes.push(`${name} after the last restart, by itself: ${after} schedules acknowledged, ${delivered} deliveries`);
        if (after === 0 || delivered === 0) problems.push(`${name} did not schedule and deliver again after the restart (${after} schedules, ${delivered} deliveries)`);
      }
      if (problems.length > 0) throw new Error(problems.join('; '));
      await runWorkers(workers, round, 0);
    }),
  );
}

export const pgRestartScenario: Scenario = { name: 'pg-restart', needs: 'postgres', run: (run) => pgRestart(run, run.short ? 1 : 3, run.short ? 3_000 : 6_000) };
