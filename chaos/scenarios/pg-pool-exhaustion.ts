/**
 * The benchmark's pool_exhaustion cell: idle connections opened while the queue runs, until
 * the server's connections are all taken but a small margin (max_connections, less the
 * superuser-reserved ones, less every connection already open, less MARGIN), and held for the
 * stress. The queue's process keeps its pool and its LISTEN connection, and must reconnect
 * within the margin when one of them is closed (node-postgres closes a pool connection idle
 * for 10 s). The full run's cluster has max_connections 300, as the benchmark holds 300.
 */
import type pg from 'pg';
import { cellScenarios, chaosClient, type Cell } from '../cells.js';

/** Connections left free for the queue's process to reconnect with. */
const MARGIN = 3;

const cell: Cell = {
  name: 'pg-pool-exhaustion',
  title: 'connections exhausted but a margin',
  faults: (run) => `idle connections up to max_connections (${run.short ? 100 : 300}) less ${MARGIN}, held ${run.short ? 10 : 60} s while the queue runs`,
  durations: (run) => (run.short ? { baselineMs: 6_000, stressMs: 10_000, recoveryMs: 10_000 } : { baselineMs: 30_000, stressMs: 60_000, recoveryMs: 30_000 }),
  rate: () => 1_000,
  settings: (run) => ({ max_connections: run.short ? 100 : 300 }),
  async start(ctx) {
    const admin = await chaosClient(ctx.url, 'idle-admin');
    const { rows } = await admin.query<{ max: number; reserved: number; open: number }>(
      `SELECT current_setting('max_connections')::int AS max, current_setting('superuser_reserved_connections')::int AS reserved,
              (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS open`,
    );
    const { max, reserved, open } = rows[0]!;
    // The admin connection is closed before the idle ones are counted as held: one more for them.
    const wanted = max - reserved - open - MARGIN + 1;
    await admin.end();
    const held: pg.Client[] = [];
    const errors: string[] = [];
    // 20 at a time: each is a fork of the server.
    for (let opened = 0; opened < wanted && errors.length === 0; opened += 20) {
      const batch = await Promise.allSettled(Array.from({ length: Math.min(20, wanted - opened) }, (_, i) => chaosClient(ctx.url, `idle-${opened + i}`)));
      for (const r of batch) {
        if (r.status === 'fulfilled') held.push(r.value);
        else errors.push(String(r.reason));
      }
    }
    return {
      async stop() {
        await Promise.all(held.map((c) => c.end().catch(() => undefined)));
        return [
          `held ${held.length} idle connections (max_connections ${max}, ${reserved} reserved for superusers, ${open} open before, margin ${MARGIN})${errors.length === 0 ? '' : `; ${errors.length} refused: ${errors[0]}`}`,
        ];
      },
    };
  },
};

export const [pgPoolExhaustionScenario, pgbossPoolExhaustionScenario] = cellScenarios(cell);
