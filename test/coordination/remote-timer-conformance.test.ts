// The remote timers and their backend contract on the in-memory backing and a ManualClock:
// no process, no server (the same suite runs on Redis and PostgreSQL in
// test/stores/*/remote-timer-conformance.test.ts). Twice: with a timers channel, and
// polling only (a published message reaches no one), where the channel's cases are skipped
// and the timers must reach their owners through loads alone.
import { MemoryTimerBacking } from '../../src/coordination/memory-timer-backend.js';
import { runRemoteTimerConformance, type TimerBackingUnderTest } from '../../src/testing/remote-timer-conformance.js';

function memory(delivers: boolean): () => Promise<TimerBackingUnderTest> {
  return async () => {
    const backing = new MemoryTimerBacking(16, delivers);
    return {
      backend: async (receive) => backing.backend(receive),
      delivers,
      seed: async (timers) => backing.add(timers),
      send: async (message) => backing.send(message),
      close: async () => undefined,
    };
  };
}

runRemoteTimerConformance('memory, on a ManualClock', memory(true));
runRemoteTimerConformance('memory, polling only', memory(false));
