import { setTimeout as sleep } from 'node:timers/promises';
import { shardOf } from '../../src/coordination/router.js';
import { assertAlive, spawnWorker, type Worker } from '../processes.js';
import { base, readFacts, type Row, type Run, runWorkers, scenario, type Scenario } from '../round.js';
import { firstDeliveries, quantile } from '../readings.js';
import { withPostgres } from '../servers.js';

/**
 * Two delayq processes on one schema, each holding half the shards; one SIGKILLed under
 * load while its consumers hold reservations (a delivery is acked HOLD_MS after it came).
 * Its leases run out and the survivor takes its shards (timed here from the kill until
 * shard_leases shows the survivor owning all 16), loads their timers, expires the
 * reservations the dead process held (2 s after they ran out, every 5 s) and delivers them
 * again, with its pending tasks. `kills` times: after each takeover a new process joins
 * and takes its share, and the next kill alternates between the older and the newer one.
 *
 * Both processes consume the one lane (topic `chaos`), and a wakeup of a lane lets any
 * process reserve its due tasks whatever their shard: the dead process's due pending tasks
 * are reserved at the survivor's next promotion or 2 s sweep, before the takeover; the
 * takeover is what brings back the reservations it held.
 */
async function pgTakeover(run: Run, kills: number): Promise<Row> {
  const HOLD_MS = 200;
  const faults = `2 processes on one schema, one SIGKILLed under load with reservations open; its shards taken over by the survivor (${kills}x, a new second process each time)`;
  return scenario(run, 'postgres: takeover', faults, 'clean', (round) =>
    withPostgres(round, async (_cluster, store) => {
      const probe = round.pg!.probe;
      let n = 0;
      const start = (): { name: string; worker: Worker } => {
        const name = `t${n++}`;
        return { name, worker: spawnWorker(base(store, name, { rate: 100, holdMs: HOLD_MS }), round) };
      };
      let workers = [start(), start()];
      await Promise.all(workers.map((w) => w.worker.ready));
      const takeovers: { victim: string; killedAt: number; doneAt: number; shards: Set<number> }[] = [];
      for (let k = 0; k < kills; k++) {
        // Both hold a share before the kill.
        const deadline = Date.now() + 20_000;
        for (;;) {
          const now = Date.now();
          const owners = new Map<string, number>();
          for (const l of await probe.leases()) if (l.owner !== null && l.expiresAt > now) owners.set(l.owner, (owners.get(l.owner) ?? 0) + 1);
          if (owners.size === 2 && [...owners.values()].reduce((a, b) => a + b, 0) === 16) break;
          if (Date.now() > deadline) throw new Error(`the 2 processes did not share the 16 shards in 20 s: ${JSON.stringify([...owners])}`);
          await sleep(100);
        }
        await sleep(run.short ? 2_000 : 3_000);
        const before = await probe.leases();
        const victim = workers[k % 2]!;
        const survivor = workers[(k + 1) % 2]!;
        assertAlive(workers.map((w) => w.worker));
        const killedAt = Date.now();
        victim.worker.signal('SIGKILL');
        await victim.worker.exited;
        // Taken over: every shard's lease live and held by one owner (the dead one renews nothing).
        for (;;) {
          if (Date.now() - killedAt > 30_000) throw new Error("the survivor did not take the dead process's shards in 30 s");
          await sleep(50);
          const now = Date.now();
          const after = await probe.leases();
          const owners = new Set(after.map((l) => (l.owner !== null && l.expiresAt > now ? l.owner : null)));
          if (owners.size === 1 && !owners.has(null)) {
            const survivorOwner = after[0]!.owner!;
            takeovers.push({ victim: victim.name, killedAt, doneAt: now, shards: new Set(before.filter((l) => l.owner !== survivorOwner).map((l) => l.shard)) });
            break;
          }
        }
        workers = k + 1 < kills ? [survivor, start()] : [survivor];
        await Promise.all(workers.map((w) => w.worker.ready));
      }
      await sleep(run.short ? 3_000 : 5_000);
      assertAlive(workers.map((w) => w.worker));
      await runWorkers(
        workers.map((w) => w.worker),
        round,
        0,
      );
      readFacts(round);
      const first = firstDeliveries(round.facts);
      for (const [i, t] of takeovers.entries()) {
        const own = round.workerFacts.get(t.victim)!;
        // Reservations the dead process held at its death (no ack of its own): when they were delivered again.
        const acked = new Set(own.acks.map((a) => `${a.id} ${a.attempt}`));
        const open = own.deliveries.filter((d) => !acked.has(`${d.id} ${d.attempt}`));
        const again = open
          .map((d) => Math.min(...round.facts.deliveries.filter((e) => e.id === d.id && e.attempt > d.attempt).map((e) => e.at)) - t.killedAt)
          .sort((a, b) => a - b);
        const missing = again.filter((ms) => ms === Infinity).length;
        const lateness = [...round.facts.scheduled]
          .filter(([id, runAt]) => t.shards.has(shardOf(id, 16)) && runAt >= t.killedAt && runAt <= t.doneAt)
          .map(([id, runAt]) => (first.get(id) ?? Infinity) - runAt)
          .sort((a, b) => a - b);
        round.notes.push(
          `takeover ${i + 1} (${t.victim} killed): its ${t.shards.size} shards owned by the survivor ${((t.doneAt - t.killedAt) / 1000).toFixed(1)} s after the SIGKILL (documented: within 6 s); ` +
            `the ${open.length} reservations it held delivered again ${quantile(again.filter((ms) => ms !== Infinity), 0.5)} (p50) / ${quantile(again.filter((ms) => ms !== Infinity), 1)} (max) after the kill${missing > 0 ? `, ${missing} never` : ''}; ` +
            `its shards' ${lateness.length} tasks due before the takeover delivered with lateness p50 ${quantile(lateness, 0.5)}, max ${quantile(lateness, 1)}`,
        );
      }
    }),
  );
}

export const pgTakeoverScenario: Scenario = { name: 'pg-takeover', needs: 'postgres', run: (run) => pgTakeover(run, run.short ? 1 : 3) };
