/**
 * Shard leases in PostgreSQL rows (migration 0002): `shard_leases` holds one row per shard
 * with its owner, fencing token and expiry, `members` the heartbeats. Each step is one
 * statement, so two processes racing for a shard are serialized by its row lock and one
 * wins. The loop around it is the shared one (src/stores/shared/lease-keeper.ts). Times are
 * the processes' wall clocks, passed in: processes on one schema need roughly synced clocks.
 */
import type { LeaseBackend } from '../shared/lease-keeper.js';
import type { PgContext } from './context.js';

export function pgLeaseBackend(pg: PgContext): LeaseBackend {
  return {
    shardCount: pg.shards,
    async heartbeat(owner, now, until) {
      const rows = await pg.query<{ live: number }>(
        `WITH beat AS (
           INSERT INTO ${pg.t('members')} (owner, expires_at) VALUES ($1, $3)
           ON CONFLICT (owner) DO UPDATE SET expires_at = excluded.expires_at RETURNING owner
         ),
         gone AS (DELETE FROM ${pg.t('members')} WHERE expires_at < $2 AND owner <> $1 RETURNING owner)
         SELECT (SELECT count(*) FROM ${pg.t('members')} WHERE expires_at >= $2 AND owner <> $1)::int + 1 AS live`,
        [owner, now, until],
      );
      return rows[0]?.live ?? 1;
    },
    async acquire(shard, owner, now, ttlMs) {
      const rows = await pg.query<{ token: number }>(
        `UPDATE ${pg.t('shard_leases')} SET owner = $2, token = token + 1, expires_at = $3::bigint + $4::bigint
          WHERE shard = $1 AND (owner IS NULL OR expires_at <= $3) RETURNING token`,
        [shard, owner, now, ttlMs],
      );
      return rows[0] === undefined ? null : String(rows[0].token);
    },
    async renew(shard, token, now, ttlMs) {
      const rows = await pg.query(
        `UPDATE ${pg.t('shard_leases')} SET expires_at = $3::bigint + $4::bigint
          WHERE shard = $1 AND token = $2 AND owner IS NOT NULL AND expires_at > $3 RETURNING shard`,
        [shard, Number(token), now, ttlMs],
      );
      return rows.length > 0;
    },
    async release(shard, token) {
      await pg.query(`UPDATE ${pg.t('shard_leases')} SET owner = NULL, expires_at = 0 WHERE shard = $1 AND token = $2`, [shard, Number(token)]);
    },
    async leave(owner) {
      await pg.query(`DELETE FROM ${pg.t('members')} WHERE owner = $1`, [owner]);
    },
  };
}
