import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Runs `call` until it resolves, every 100 ms, and rethrows its last error once `deadline`
 * (ms since the epoch) has passed: for a store that recovers by itself after a fault (a
 * pool replacing dropped connections, a shard's probe clearing its mark).
 */
export async function untilResolved<T>(call: () => Promise<T>, deadline: number): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(100);
    }
  }
}
