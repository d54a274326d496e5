// The lease backend contract and the lease loop over it, on real PostgreSQL rows
// (src/testing/lease-conformance.ts; the same suite runs in memory and on Redis). The
// statements take `now` from their caller, but the keepers' ticks wait for their statements:
// on a ManualClock moved in steps, a tick slowed by a busy server would see its leases run
// out in clock time that never passed for it (a flaky test, seen under load). So time is the
// system clock, and the lease long enough (2 s) for a slow statement to stay inside it.
import { setTimeout as sleep } from 'node:timers/promises';
import { silentLogger } from '../../../src/core/logger.js';
import { createPool } from '../../../src/stores/postgres/connection.js';
import { PgContext } from '../../../src/stores/postgres/context.js';
import { openPostgresStore } from '../../../src/stores/postgres/index.js';
import { pgLeaseBackend } from '../../../src/stores/postgres/lease-backend.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { runLeaseConformance } from '../../../src/testing/lease-conformance.js';
import { dropSchema, freshSchema, PG_URL } from '../../helpers/postgres.js';

runLeaseConformance('postgres', async () => {
  const schema = freshSchema('leases');
  // Opening a store once creates the schema; the suite's processes then use its rows only.
  await (await openPostgresStore(`${PG_URL}?schema=${schema}`, { clock: storeSystemClock })).close();
  // One small pool for every view: a lease step is one statement, so views need no
  // connection of their own, and the suite must not take many of the server's connections
  // (100 here, shared with the other test file running beside it).
  const pool = createPool(PG_URL, silentLogger, 10_000, 3);
  const context = new PgContext(pool, schema, 0, 16, `lease conformance (schema ${schema})`);
  return {
    backend: async () => pgLeaseBackend(context),
    clock: storeSystemClock,
    leaseMs: 2_000,
    pass: (ms) => sleep(ms),
    async close() {
      await pool.end();
      await dropSchema(schema);
    },
  };
});
