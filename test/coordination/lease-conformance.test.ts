// The lease backend contract and the lease loop over it, on the in-memory backing and a
// ManualClock: no process, no server, every tick moved by hand (the same suite runs on Redis
// and PostgreSQL in test/stores/*/lease-conformance.test.ts).
import { MemoryLeaseBacking } from '../../src/coordination/memory-lease-backend.js';
import { ManualClock } from '../../src/core/manual-clock.js';
import { runLeaseConformance } from '../../src/testing/lease-conformance.js';

runLeaseConformance('memory, on a ManualClock', async () => {
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const backing = new MemoryLeaseBacking(16);
  return {
    backend: async () => backing.backend(),
    clock,
    leaseMs: 5_000,
    async pass(ms) {
      // In steps of 10 ms, letting the keepers' ticks (promise chains) settle after each.
      for (let left = ms; left > 0; left -= 10) {
        clock.advance(Math.min(10, left));
        for (let turn = 0; turn < 5; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    },
    close: async () => undefined,
  };
});
