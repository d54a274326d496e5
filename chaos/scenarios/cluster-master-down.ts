import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { buildKeyspace } from '../../src/stores/redis/keys.js';
import { keySlot } from '../../src/stores/redis/slot.js';
import { shardOf } from '../../src/coordination/router.js';
import { redisStandings } from '../redis-rows.js';
import { undelivered } from '../checker.js';
import { cli, startRedis } from '../../test/helpers/redis-servers.js';
import { spawnWorker, stopWorker } from '../processes.js';
import { base, drain, PRINTED_STANDINGS, readFacts, type Row, type Run, scenario, type Scenario } from '../round.js';
import { clusterWithVictim, slotRanges } from '../servers.js';

/**
 * A master of a 3-master cluster under waitReplicas=1 SIGKILLed and left down: its replica
 * takes over, and, with no replica of its own, cannot acknowledge a write. The shards on the
 * two healthy masters must keep flowing (90% of their tasks due while it is down delivered
 * within 10 s of runAt); the degraded shards' writes answer STORE_UNAVAILABLE; once the old
 * master is back as a replica, everything acknowledged is delivered.
 */
async function clusterMasterDown(run: Run): Promise<Row> {
  const name = 'redis cluster: a master down, waitReplicas=1';
  const downMs = run.short ? 20_000 : 30_000;
  const faults = `3 masters + 3 replicas, waitReplicas=1; a master SIGKILLed and left down ${downMs / 1000} s (its promoted replica has no replica), then back as a replica`;
  return scenario(run, name, faults, 'clean', async (round) => {
    const { cluster, servers, victim, replica } = await clusterWithVictim();
    try {
      const prefix = 'md';
      const shards = 16;
      const ranges = slotRanges(victim.port);
      const keyspace = buildKeyspace(prefix, shards);
      const degraded = new Set(
        keyspace.shards.filter((s) => ranges.some(([low, high]) => keySlot(s.pool) >= low && keySlot(s.pool) <= high)).map((s) => s.index),
      );
      if (degraded.size === 0 || degraded.size === shards) throw new Error(`the victim holds ${degraded.size} of ${shards} shards`);
      const store = `${cluster.url}?prefix=${prefix}&shards=${shards}&waitReplicas=1&waitTimeoutMs=500`;
      const workers = [0, 1].map((i) => spawnWorker(base(store, `m${i}`, { rate: 150, ttrMs: 3_000 }), round));
      await Promise.all(workers.map((w) => w.ready));
      await sleep(run.short ? 2_000 : 4_000);
      const killedAt = Date.now();
      await victim.kill();
      const deadline = Date.now() + 30_000;
      while (!cli(replica.port, 'INFO', 'replication').includes('role:master')) {
        if (Date.now() > deadline) throw new Error('the replica did not take over in 30 s');
        await sleep(50);
      }
      round.notes.push(`replica promoted ${((Date.now() - killedAt) / 1000).toFixed(1)} s after its master was killed; ${degraded.size} of ${shards} shards on it`);
      await sleep(Math.max(0, killedAt + downMs - Date.now()));
      const backAt = Date.now();
      readFacts(round, false);
      // Tasks of healthy shards due while the master was down, far enough before its return to be judged.
      const judged = [...round.facts.scheduled].filter(([id, runAt]) => runAt >= killedAt && runAt <= backAt - 10_000 && !degraded.has(shardOf(id, shards)));
      const firstDelivery = new Map<string, number>();
      for (const d of round.facts.deliveries) if (!firstDelivery.has(d.id) || d.at < firstDelivery.get(d.id)!) firstDelivery.set(d.id, d.at);
      const onTime = judged.filter(([id, runAt]) => (firstDelivery.get(id) ?? Infinity) <= runAt + 10_000).length;
      const lateness = judged.map(([id, runAt]) => (firstDelivery.get(id) ?? Infinity) - runAt).sort((a, b) => a - b);
      const at = (q: number): string => (lateness.length === 0 ? '-' : `${lateness[Math.min(lateness.length - 1, Math.floor(q * lateness.length))]} ms`);
      const degradedScheduled = [...round.facts.scheduled].filter(([id, runAt]) => runAt >= killedAt + 5_000 && degraded.has(shardOf(id, shards))).length;
      round.notes.push(
        `while it was down: ${onTime} of ${judged.length} healthy-shard tasks delivered within 10 s of runAt (lateness p50 ${at(0.5)}, p99 ${at(0.99)}); ${degradedScheduled} degraded-shard schedules acknowledged from 5 s after the kill`,
      );
      if (judged.length === 0) throw new Error('no healthy-shard task fell due while the master was down');
      if (onTime < 0.9 * judged.length) throw new Error(`only ${onTime} of ${judged.length} healthy-shard tasks were delivered within 10 s while a master was down`);
      if (degradedScheduled > 0) throw new Error(`${degradedScheduled} schedules into degraded shards were acknowledged although their master had no replica`);
      servers[0] = await startRedis({ cluster: true, port: victim.port, dir: victim.dir });
      round.notes.push(`the old master back as a replica ${((Date.now() - backAt) / 1000).toFixed(1)} s after ${downMs / 1000} s down`);
      await sleep(run.short ? 3_000 : 6_000);
      for (const w of workers) w.signal('SIGUSR2');
      await drain(round);
      // Still undelivered after the drain: where they stand, while the workers still run, and after they stopped.
      const nodes = servers.map((s) => ({ host: '127.0.0.1', port: s.port }));
      const missing = undelivered(round.facts);
      const before = missing.length === 0 ? [] : await redisStandings(nodes, true, prefix, shards, missing).catch((error: unknown) => [{ id: '-', reading: String(error) }]);
      await Promise.all(workers.map(stopWorker));
      readFacts(round);
      const still = undelivered(round.facts);
      const after = still.length === 0 ? [] : await redisStandings(nodes, true, prefix, shards, still).catch((error: unknown) => [{ id: '-', reading: String(error) }]);
      const lines = [...before.map((r) => `after the drain: ${r.id}: ${r.reading}`), ...after.map((r) => `after the workers stopped: ${r.id}: ${r.reading}`)];
      if (lines.length > 0) {
        writeFileSync(join(round.dir, 'standings.txt'), `killed at ${killedAt}, back at ${backAt}\n${lines.join('\n')}\n`);
        round.notes.push(`killed at ${killedAt}, back at ${backAt}`, ...lines.slice(0, PRINTED_STANDINGS));
      }
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      for (const s of servers) s.remove();
    }
  });
}

export const clusterMasterDownScenario: Scenario = { name: 'cluster-master-down', needs: 'redis', run: clusterMasterDown };
