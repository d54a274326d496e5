/**
 * The benchmark's active_readers cell: four sessions, each in one REPEATABLE READ
 * transaction for the whole stress (its snapshot, and so the xmin horizon, held from its
 * first statement), counting the queue's busiest table every 100 ms: reporting queries on
 * the hot tables, pinning vacuum as an idle transaction does, and reading every row version
 * the churn leaves. Issue 48 measured lateness p99 117 -> 689 ms.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { cellScenarios, chaosClient, type Cell } from '../cells.js';

const READERS = 4;

const cell: Cell = {
  name: 'pg-active-readers',
  title: 'four REPEATABLE READ readers',
  faults: (run) => `${READERS} REPEATABLE READ transactions counting the hot table every 100 ms for ${run.short ? 12 : 120} s under ${run.short ? '1,000' : '1,500'} tasks/s`,
  durations: (run) => (run.short ? { baselineMs: 6_000, stressMs: 12_000, recoveryMs: 10_000 } : { baselineMs: 30_000, stressMs: 120_000, recoveryMs: 30_000 }),
  rate: (run) => (run.short ? 1_000 : 1_500),
  stressBound: true,
  async start(ctx) {
    let reading = true;
    const scans: number[] = [];
    const clients = await Promise.all(Array.from({ length: READERS }, (_, i) => chaosClient(ctx.url, `reader-${i}`)));
    const loops = clients.map(async (client) => {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      while (reading) {
        const started = Date.now();
        try {
          await client.query(`SELECT count(*) FROM "${ctx.schema}"."${ctx.hotTable}"`);
          scans.push(Date.now() - started);
        } catch {
          // Kept reading, as the benchmark's readers do.
        }
        await sleep(100);
      }
      await client.query('COMMIT').catch(() => undefined);
      await client.end().catch(() => undefined);
    });
    return {
      async stop() {
        reading = false;
        await Promise.all(loops);
        const sorted = [...scans].sort((a, b) => a - b);
        return [`${READERS} readers scanned ${ctx.hotTable} ${scans.length} times (a scan p50 ${sorted[Math.floor(sorted.length / 2)] ?? '-'} ms, max ${sorted.at(-1) ?? '-'} ms)`];
      },
    };
  },
};

export const [pgActiveReadersScenario, pgbossActiveReadersScenario] = cellScenarios(cell);
