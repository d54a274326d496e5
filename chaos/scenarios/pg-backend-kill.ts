/**
 * The benchmark's pg_backend_kill cell, and issue 48's reconnect storm: twice a second, every
 * connection the queue's process holds (its pool and its LISTEN connection: every client
 * backend but the runner's own) is ended with pg_terminate_backend. The callers' side is
 * judged (delayq's row, with callTimeoutMs=2000): every call either succeeds or rejects with
 * STORE_UNAVAILABLE, each within callTimeoutMs; nothing acknowledged is lost (the listener
 * resubscribes, and what it missed is read again). The killer also times each reconnect: from
 * a kill to the next backend of the same kind (pool, listener) starting, from
 * pg_stat_activity.backend_start; the storm's lateness is set against it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { cellScenarios, chaosClient, type Cell, type CellCheck } from '../cells.js';
import { quantile } from '../readings.js';

const KILLS_PER_SECOND = 2;
const CALL_TIMEOUT_MS = 2_000;

interface Backend {
  readonly pid: number;
  readonly app: string;
  readonly started: number;
}

const cell: Cell = {
  name: 'pg-backend-kill',
  title: 'pg_terminate_backend twice a second',
  faults: (run) => `every connection of the queue's process ended with pg_terminate_backend ${KILLS_PER_SECOND}x a second for ${run.short ? 10 : 60} s (callTimeoutMs ${CALL_TIMEOUT_MS})`,
  durations: (run) => (run.short ? { baselineMs: 6_000, stressMs: 10_000, recoveryMs: 10_000 } : { baselineMs: 30_000, stressMs: 60_000, recoveryMs: 30_000 }),
  rate: () => 1_000,
  storeParameters: `&callTimeoutMs=${CALL_TIMEOUT_MS}`,
  slowCallMs: 500,
  async start(ctx) {
    const killer = await chaosClient(ctx.url, 'killer');
    let killing = true;
    let kills = 0;
    // Per kind of connection (application_name): when each kill happened, and every backend seen since.
    const killed: { app: string; at: number }[] = [];
    const seen = new Map<number, Backend>();
    const loop = (async () => {
      while (killing) {
        const tick = Date.now();
        try {
          const { rows } = await killer.query<{ pid: number; app: string; started: string; ended: boolean }>(
            `SELECT pid, application_name AS app, (extract(epoch FROM backend_start) * 1000)::bigint::text AS started,
                    pg_terminate_backend(pid) AS ended
               FROM pg_stat_activity
              WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND application_name NOT LIKE 'delayq-chaos%'`,
          );
          for (const r of rows) {
            seen.set(r.pid, { pid: r.pid, app: r.app, started: Number(r.started) });
            if (r.ended) {
              kills++;
              killed.push({ app: r.app, at: tick });
            }
          }
        } catch {
          // The killer's own connection is never a target; a failed tick is tried again.
        }
        await sleep(Math.max(0, 1_000 / KILLS_PER_SECOND - (Date.now() - tick)));
      }
      await killer.end().catch(() => undefined);
    })();
    return {
      async stop() {
        killing = false;
        await loop;
        // A reconnect: from a kill of a kind to the first backend of that kind started after it.
        const byApp = new Map<string, number[]>();
        const backends = [...seen.values()];
        for (const k of killed) {
          const next = backends.filter((b) => b.app === k.app && b.started > k.at).reduce((low, b) => Math.min(low, b.started), Infinity);
          if (next === Infinity) continue;
          const list = byApp.get(k.app) ?? [];
          list.push(next - k.at);
          byApp.set(k.app, list);
        }
        const reconnects = [...byApp].map(([app, ms]) => {
          const sorted = ms.sort((a, b) => a - b);
          return `${app || '(none)'} p50 ${quantile(sorted, 0.5)}, p99 ${quantile(sorted, 0.99)}, max ${quantile(sorted, 1)} (${sorted.length})`;
        });
        return [
          `${kills} backends ended in ${killed.length === 0 ? 0 : new Set(killed.map((k) => k.at)).size} ticks`,
          `reconnect, from a kill to the next backend of its kind (seen at the next tick, so at most 500 ms late): ${reconnects.join('; ') || 'none seen'}`,
        ];
      },
    };
  },
  judge(facts, windows, system): CellCheck[] {
    if (system !== 'delayq') return [];
    const during = (at: number): boolean => at >= windows.stress.from && at <= windows.stress.to + CALL_TIMEOUT_MS;
    const errors = facts.errors.filter((e) => during(e.at));
    const wrong = errors.filter((e) => e.code !== 'STORE_UNAVAILABLE');
    const slowErrors = errors.filter((e) => e.ms > CALL_TIMEOUT_MS);
    const slowCalls = facts.slow.filter((c) => during(c.at) && c.ms > CALL_TIMEOUT_MS);
    const slowest = Math.max(0, ...errors.map((e) => e.ms), ...facts.slow.filter((c) => during(c.at)).map((c) => c.ms));
    return [
      {
        name: 'every rejected call STORE_UNAVAILABLE',
        ok: wrong.length === 0,
        detail: `${errors.length} rejected in the storm${wrong.length === 0 ? '' : `, ${wrong.length} with another code (${[...new Set(wrong.map((e) => `${e.op} ${e.code}`))].join(', ')})`}`,
      },
      {
        name: `every call answered within callTimeoutMs (${CALL_TIMEOUT_MS} ms)`,
        ok: slowErrors.length === 0 && slowCalls.length === 0,
        detail: `slowest ${slowest} ms; ${slowErrors.length} rejections and ${slowCalls.length} successes slower than ${CALL_TIMEOUT_MS} ms`,
      },
    ];
  },
};

export const [pgBackendKillScenario, pgbossBackendKillScenario] = cellScenarios(cell);
