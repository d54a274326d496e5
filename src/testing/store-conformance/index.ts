/**
 * The store contract, as tests. Every store (memory, SQLite, Redis, Redis Cluster) runs
 * this suite unchanged by calling `runStoreConformance` with a factory:
 *
 *   import { runStoreConformance } from 'delayq/testing';
 *   runStoreConformance('memory', async () => ({ store: new MemoryStore() }));
 *
 * The factory returns a fresh, empty store each time (and a cleanup to drop it). Times
 * are passed in, never read from a clock, so every case is deterministic. The cases run
 * under node:test (`node --test`).
 */
import { after, afterEach, beforeEach, describe } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { cancelAndRescheduleCases } from './cancel-reschedule.js';
import { deferCases } from './defer.js';
import { extendCases } from './extend.js';
import { historyCases } from './history.js';
import { hostileNameCases } from './hostile-names.js';
import { holdableTextCases } from './text.js';
import { quarantineCases } from './quarantine.js';
import { inspectionCases } from './inspection.js';
import { lifecycleCases } from './lifecycle.js';
import { loadDueCases } from './load-due.js';
import { ownPushUrlCases } from './own-push-url.js';
import { pushSubscriptionCases } from './push-subscriptions.js';
import { purgeTopicCases } from './purge-topic.js';
import { topicPauseCases } from './topic-pauses.js';
import { topicLimitCases } from './topic-limits.js';
import { recurringScheduleCases } from './recurring-schedules.js';
import { reserveCases } from './reserve.js';
import { scheduleCases } from './schedule.js';
import { settleCases } from './settle.js';
import { traceContextCases } from './trace-context.js';
import { priorityCases } from './priority.js';

export { T0, pushSubscription, scheduleRecord, task } from './fixtures.js';
export { HOSTILE_NAMES } from './hostile-names.js';

export interface StoreUnderTest {
  readonly store: TaskStore;
  /** Drops the store's data and connections. Default: store.close(). */
  readonly cleanup?: () => Promise<void>;
}

export type StoreFactory = () => Promise<StoreUnderTest>;

/**
 * A stand-in for the store of the case running, which beforeEach replaces: the cases are
 * defined once, when the suite is, and each must reach the fresh store of its own run.
 */
function storeOfTheRunningCase(current: () => TaskStore | undefined): TaskStore {
  return new Proxy({} as TaskStore, {
    get(_, key) {
      const store = current();
      if (store === undefined) throw new Error('the store suite reached its store outside a case');
      const value: unknown = Reflect.get(store, key);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(store) : value;
    },
  });
}

export function runStoreConformance(name: string, factory: StoreFactory): void {
  describe(`store conformance: ${name}`, () => {
    let current: TaskStore | undefined;
    const cleanups: (() => Promise<void>)[] = [];

    beforeEach(async () => {
      const opened = await factory();
      current = opened.store;
      // Closes this store, not whatever is current by then: a test that skips itself gets
      // no afterEach (node 20), so its cleanup runs after the next test's beforeEach.
      cleanups.push(opened.cleanup ?? (() => opened.store.close()));
    });

    afterEach(async () => {
      while (cleanups.length > 0) await cleanups.pop()!();
    });

    after(async () => {
      while (cleanups.length > 0) await cleanups.pop()!();
    });

    const store = storeOfTheRunningCase(() => current);
    for (const cases of [
      scheduleCases,
      cancelAndRescheduleCases,
      loadDueCases,
      reserveCases,
      settleCases,
      extendCases,
      inspectionCases,
      purgeTopicCases,
      topicPauseCases,
      topicLimitCases,
      pushSubscriptionCases,
      deferCases,
      ownPushUrlCases,
      traceContextCases,
      priorityCases,
      recurringScheduleCases,
      lifecycleCases,
      historyCases,
      hostileNameCases,
      holdableTextCases,
      quarantineCases,
    ])
      cases(store);
  });
}
