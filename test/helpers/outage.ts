/**
 * What the tests of a store outage (a frozen server, every cluster node down) check on the
 * queue: each call made during it is refused, and afterwards every acknowledged task is
 * delivered, none before its runAt.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDelayQError } from '../../src/core/errors.js';
import type { DelayQueue } from '../../src/open-queue.js';

export interface Refusal {
  readonly code: string | null;
  readonly message: string;
  /** How long the call took to be refused. */
  readonly ms: number;
}

/** Runs each call in turn; each must reject (a resolved one fails the test with `resolved`). */
export async function refusalsOf(calls: readonly (() => Promise<unknown>)[], resolved: string): Promise<Refusal[]> {
  const refusals: Refusal[] = [];
  for (const call of calls) {
    const started = Date.now();
    await call().then(
      () => assert.fail(resolved),
      (error: unknown) =>
        void refusals.push({ code: isDelayQError(error) ? error.code : null, message: error instanceof Error ? error.message : String(error), ms: Date.now() - started }),
    );
  }
  return refusals;
}

/** A worker on `topic` that records each delivery and every one made before its runAt. */
export function watchDeliveries(q: DelayQueue, topic: string): { readonly early: readonly string[]; untilDelivered(ids: readonly string[], deadline: number): Promise<void> } {
  const delivered = new Set<string>();
  const early: string[] = [];
  q.work(topic, (d) => {
    if (Date.now() < d.runAt) early.push(d.id);
    delivered.add(d.id);
  });
  return {
    early,
    async untilDelivered(ids, deadline) {
      while (ids.some((id) => !delivered.has(id))) {
        if (Date.now() > deadline) assert.fail(`not delivered: ${ids.filter((id) => !delivered.has(id)).slice(0, 10).join(', ')}`);
        await sleep(100);
      }
    },
  };
}
