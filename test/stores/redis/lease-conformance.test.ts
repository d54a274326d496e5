// The lease backend contract and the lease loop over it, on a real redis-server
// (src/testing/lease-conformance.ts; the same suite runs in memory and on PostgreSQL).
// Redis runs leases out by itself (PX), so time is the system clock and waits are real.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { buildKeyspace } from '../../../src/stores/redis/keys.js';
import { redisLeaseBackend } from '../../../src/stores/redis/lease-keeper.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { runLeaseConformance } from '../../../src/testing/lease-conformance.js';
import { startRedis } from '../../helpers/redis-servers.js';

runLeaseConformance('redis', async () => {
  const server = await startRedis();
  const keys = buildKeyspace('leases', 16);
  const clients: Redis[] = [];
  return {
    async backend() {
      const client = new Redis(server.url, { maxRetriesPerRequest: 1, lazyConnect: true });
      clients.push(client);
      await client.connect();
      return redisLeaseBackend(client, keys);
    },
    clock: storeSystemClock,
    // Long enough (a 200 ms tick, 800 ms ttl) that a script slowed by a busy host stays inside it.
    leaseMs: 1_000,
    pass: (ms) => sleep(ms),
    async close() {
      for (const client of clients) client.disconnect();
      await server.stop();
      server.remove();
    },
  };
});
