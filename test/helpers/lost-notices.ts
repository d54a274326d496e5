/**
 * What the lost-notice tests of the shared stores (test/stores/{redis,postgres}/lost-notices,
 * redis/lost-timer) share: a consumer that polls a topic as the HTTP clients do and notes
 * when each task came.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DelayQueue } from '../../src/open-queue.js';

export interface Delivered {
  readonly id: string;
  readonly at: number;
}

export interface ConsumeUntil {
  /** Stop polling at this time (Date.now()) if nothing came... */
  readonly until: number;
  /** ...or this long after the last delivery (longer than a sweep, to catch a second one). */
  readonly watchMoreMs: number;
  /** Each reserve call's long poll; 0 for a consumer that does not wait... */
  readonly waitMs: number;
  /** ...and then calls again after this pause. */
  readonly noWaitPauseMs: number;
}

/** Reserves `topic` (10 at a time, a ttr of 60 s) until `until` or `watchMoreMs` after the last delivery; acks them all at the end. */
export async function consumeUntil(queue: DelayQueue, topic: string, { until, watchMoreMs, waitMs, noWaitPauseMs }: ConsumeUntil): Promise<Delivered[]> {
  const seen: Delivered[] = [];
  const receipts: { id: string; receipt: string }[] = [];
  let stopAt = until;
  while (Date.now() < stopAt) {
    const deliveries = await queue.reserve(topic, { max: 10, waitMs, ttrMs: 60_000 });
    for (const delivery of deliveries) {
      seen.push({ id: delivery.id, at: Date.now() });
      receipts.push({ id: delivery.id, receipt: delivery.receipt });
      stopAt = Math.max(stopAt, Date.now() + watchMoreMs);
    }
    if (waitMs === 0) await sleep(noWaitPauseMs);
  }
  for (const { id, receipt } of receipts) await queue.ack(id, receipt);
  return seen;
}
