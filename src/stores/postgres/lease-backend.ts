/**
 * Shard leases in PostgreSQL rows (migration 0002): `shard_leases` holds one row per shard
 * with its owner, fencing token and expiry, `members` the heartbeats and join times
 * (migration 0017). Each step is one statement, so two processes racing for a shard are
 * serialized by its row lock and one wins. The loop around it is the shared one
 * (src/coordination/lease-keeper.ts). Times are the processes' wall clocks, passed in:
 * processes on one schema need roughly synced clocks (a join time too far behind ranks a
 * newcomer before the processes that were there).
 */
import type { LeaseBackend } from '../../coordination/lease-keeper.js';
import type { PgContext } from './context.js';

export function pgLeaseBackend(pg: PgContext): LeaseBackend {
  return {
    shardCount: pg.shards,
    async heartbeat(owner, now, until) {
      const rows = await pg.query<{ live: number; rank: number }>(pg.sql('heartbeat'), [owner, now, until]);
      return { live: rows[0]?.live ?? 1, rank: rows[0]?.rank ?? 0 };
    },
    async acquire(shard, owner, now, ttlMs) {
      const rows = await pg.query<{ token: number }>(pg.sql('lease-acquire'), [shard, owner, now, ttlMs]);
      return rows[0] === undefined ? null : String(rows[0].token);
    },
    async renew(shard, token, now, ttlMs) {
      const rows = await pg.query(pg.sql('lease-renew'), [shard, Number(token), now, ttlMs]);
      return rows.length > 0;
    },
    async release(shard, token) {
      await pg.query(pg.sql('lease-release'), [shard, Number(token)]);
    },
    async leave(owner) {
      await pg.query(pg.sql('leave'), [owner]);
    },
  };
}
