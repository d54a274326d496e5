// The lease backend contract and the lease loop over it, on real PostgreSQL rows
// (src/testing/lease-conformance.ts; the same suite runs in memory and on Redis). The
// statements take `now` from their caller, so time is a ManualClock moved by hand.
import { ManualClock } from '../../../src/core/manual-clock.js';
import { silentLogger } from '../../../src/core/logger.js';
import { createPool } from '../../../src/stores/postgres/connection.js';
import { PgContext } from '../../../src/stores/postgres/context.js';
import { openPostgresStore } from '../../../src/stores/postgres/index.js';
import { pgLeaseBackend } from '../../../src/stores/postgres/lease-backend.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { runLeaseConformance } from '../../../src/testing/lease-conformance.js';
import { dropSchema, freshSchema, PG_URL } from '../../helpers/postgres.js';

runLeaseConformance('postgres, on a ManualClock', async () => {
  const schema = freshSchema('leases');
  // Opening a store once creates the schema; the suite's processes then use its rows only.
  await (await openPostgresStore(`${PG_URL}?schema=${schema}`, { clock: storeSystemClock })).close();
  const pools: ReturnType<typeof createPool>[] = [];
  const clock = new ManualClock(Date.now());
  return {
    async backend() {
      const pool = createPool(PG_URL, silentLogger, 10_000, 2);
      pools.push(pool);
      return pgLeaseBackend(new PgContext(pool, schema, 0, 16, `lease conformance (schema ${schema})`));
    },
    clock,
    leaseMs: 5_000,
    async pass(ms) {
      // In steps of a tenth of a tick, letting the keepers' statements finish after each.
      for (let left = ms; left > 0; left -= 100) {
        clock.advance(Math.min(100, left));
        await new Promise<void>((resolve) => setTimeout(resolve, 5));
      }
    },
    async close() {
      for (const pool of pools) await pool.end();
      await dropSchema(schema);
    },
  };
});
