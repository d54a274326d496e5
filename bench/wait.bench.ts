/**
 * npm run bench -- wait [--quick]
 *
 * The cost of the Redis store's `waitReplicas` (docs/redis.md, "Durable through
 * failover"): the same work on a master with one replica (both started here, on free
 * ports, no persistence), with waitReplicas=0 (the baseline, Redis' asynchronous
 * replication) and waitReplicas=1 (every write followed by WAIT 1 on its connection).
 * After an unmeasured warm-up, each figure is the median of three runs, alternating the settings, and reported as a
 * ratio to the baseline measured in the same run.
 *
 *   schedule batches   scheduleMany of 1,000 tasks, N tasks          tasks/s
 *   schedule one       one schedule awaited at a time               latency p50 / p99 (ms)
 *   deliver            N due tasks, reserve 100 + ackMany           tasks/s
 */
import { DelayQueue } from '../src/open-queue.js';
import { percentile, preciseNow, printTable, writeResults, type Table } from './report.js';
import { startRedis } from '../test/helpers/redis-servers.js';

interface Figures {
  scheduleRate: number;
  oneP50: number;
  oneP99: number;
  deliverRate: number;
}

async function measure(url: string, prefix: string, waitReplicas: number, n: number, singles: number): Promise<Figures> {
  const queue = await DelayQueue.open({ store: url, storeOptions: { prefix, shards: 16, waitReplicas, waitTimeoutMs: 5_000 } });
  try {
    const payload = { p: 'x'.repeat(56) };
    let started = preciseNow();
    for (let i = 0; i < n; i += 1_000)
      await queue.scheduleMany(Array.from({ length: Math.min(1_000, n - i) }, (_, k) => ({ id: `b${i + k}`, topic: 'later', payload, delayMs: 3_600_000 })));
    const scheduleRate = n / ((preciseNow() - started) / 1_000);

    const latencies: number[] = [];
    for (let i = 0; i < singles; i++) {
      const t0 = preciseNow();
      await queue.schedule({ id: `one${i}`, topic: 'later', payload, delayMs: 3_600_000 });
      latencies.push(preciseNow() - t0);
    }
    latencies.sort((a, b) => a - b);

    for (let i = 0; i < n; i += 1_000)
      await queue.scheduleMany(Array.from({ length: Math.min(1_000, n - i) }, (_, k) => ({ id: `d${i + k}`, topic: 'now', payload })));
    started = preciseNow();
    let delivered = 0;
    while (delivered < n) {
      const batch = await queue.reserve('now', { max: 100, waitMs: 1_000 });
      if (batch.length === 0) continue;
      await queue.ackMany(batch);
      delivered += batch.length;
    }
    const deliverRate = n / ((preciseNow() - started) / 1_000);
    return { scheduleRate, oneP50: percentile(latencies, 50), oneP99: percentile(latencies, 99), deliverRate };
  } finally {
    await queue.close();
  }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function run(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const n = quick ? 5_000 : 20_000;
  const singles = quick ? 500 : 2_000;
  const master = await startRedis();
  const replica = await startRedis({ replicaOf: master.port });
  const runs: Record<0 | 1, Figures[]> = { 0: [], 1: [] };
  try {
    // Warm-up, unmeasured: the first run of a process compiles the paths both settings share.
    await measure(master.url, 'warm', 0, n, singles);
    for (let round = 0; round < 3; round++)
      for (const wait of [0, 1] as const) {
        runs[wait].push(await measure(master.url, `w${wait}r${round}`, wait, n, singles));
        console.log(`round ${round + 1} waitReplicas=${wait}: ${JSON.stringify(runs[wait].at(-1))}`);
      }
  } finally {
    await replica.stop();
    await master.stop();
    replica.remove();
    master.remove();
  }
  const figure = (wait: 0 | 1, key: keyof Figures): number => median(runs[wait].map((r) => r[key]));
  const row = (label: string, key: keyof Figures, unit: string, higherIsBetter: boolean): (string | number)[] => {
    const base = figure(0, key);
    const waited = figure(1, key);
    return [label, unit, base, waited, higherIsBetter ? waited / base : base / waited];
  };
  const table: Table = {
    title: `waitReplicas cost: master + 1 replica on this machine, ${n.toLocaleString('en-US')} tasks, median of 3`,
    columns: ['measure', 'unit', 'waitReplicas=0 (baseline)', 'waitReplicas=1', 'ratio (1.0 = no cost)'],
    rows: [
      row('schedule, batches of 1,000', 'scheduleRate', 'tasks/s', true),
      row('schedule one at a time, p50', 'oneP50', 'ms', false),
      row('schedule one at a time, p99', 'oneP99', 'ms', false),
      row('reserve 100 + ackMany', 'deliverRate', 'tasks/s', true),
    ],
    notes: ['Replica on the same machine: the round trip WAIT adds is a loopback one; across hosts it is the network RTT to the replica.'],
  };
  printTable(table);
  const file = writeResults('wait', [table], { quick, tasks: n, singles });
  console.log(`\nwritten to ${file}`);
}
