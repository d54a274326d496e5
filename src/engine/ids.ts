import { randomBytes } from 'node:crypto';

/**
 * Task ids for callers that give none: the creation time (base 36, so ids sort roughly by
 * age), a per-process random part and a counter. Unique within a process by the counter
 * and across processes by 64 random bits, without a random draw per id.
 */
export function createIdGenerator(now: () => number): () => string {
  const processPart = randomBytes(8).toString('hex');
  let counter = 0;
  let lastMs = -1;
  let prefix = '';
  return () => {
    const ms = now();
    // One prefix per millisecond: ids of a batch share it instead of re-encoding the time.
    if (ms !== lastMs) {
      lastMs = ms;
      prefix = `${ms.toString(36)}-${processPart}-`;
    }
    return prefix + (counter++).toString(36);
  };
}
