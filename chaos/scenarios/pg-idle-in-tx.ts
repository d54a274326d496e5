/**
 * The benchmark's idle_in_tx cell: a session that opens a transaction, takes an xid
 * (txid_current()) and sits idle in it, so the xmin horizon stays where it was: no vacuum
 * can remove a row version made dead after it, and no index scan can mark such an entry
 * dead. Every reserve and ack leaves old versions (and their `tasks_due` entries) behind for
 * the whole stress. Issue 48 measured lateness p99 24 -> 289 ms under 3 minutes of it at
 * 1,500 tasks/s; ADR 0055 says where the time went (walks of `tasks_due` from the beginning,
 * counter rows updated for minutes) and what changed.
 */
import { cellScenarios, chaosClient, type Cell } from '../cells.js';

const cell: Cell = {
  name: 'pg-idle-in-tx',
  title: 'idle in transaction (xmin held)',
  faults: (run) => `a session idle in a transaction holding an xid (the xmin horizon pinned) for ${run.short ? 12 : 180} s under ${run.short ? '1,000' : '1,500'} tasks/s`,
  durations: (run) => (run.short ? { baselineMs: 6_000, stressMs: 12_000, recoveryMs: 10_000 } : { baselineMs: 30_000, stressMs: 180_000, recoveryMs: 30_000 }),
  rate: (run) => (run.short ? 1_000 : 1_500),
  stressBound: true,
  async start(ctx) {
    const holder = await chaosClient(ctx.url, 'holder');
    await holder.query('BEGIN');
    const { rows } = await holder.query<{ xid: string }>('SELECT txid_current()::text AS xid');
    return {
      async stop() {
        await holder.query('ROLLBACK').catch(() => undefined);
        await holder.end().catch(() => undefined);
        return [`held xid ${rows[0]?.xid ?? '?'} idle in transaction, rolled back at the stress's end`];
      },
    };
  },
};

export const [pgIdleInTxScenario, pgbossIdleInTxScenario] = cellScenarios(cell);
