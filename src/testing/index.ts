/**
 * delayq/testing: the two conformance suites a store passes (docs/stores.md, "Adding a
 * store"), for stores written outside this repository too. They define node:test suites;
 * run the file that calls them with `node --test`.
 *
 *   runStoreConformance(name, factory)   the store port's contract, on one store instance
 *   runSharedConformance(name, backing)  what several processes sharing one backing need:
 *                                        real processes open the store URL through DelayQueue.open
 *   runLeaseConformance(name, factory)   a shared store's LeaseBackend, and the lease loop over it
 *   runRemoteTimerConformance(name, factory)
 *                                        a shared store's RemoteTimerBackend, and the remote
 *                                        timers over it (routing, loads, retries, hostile messages)
 */
export { runLeaseConformance, type LeaseBackingFactory, type LeaseBackingUnderTest } from './lease-conformance.js';
export { runRemoteTimerConformance, type PendingTimer, type TimerBackingFactory, type TimerBackingUnderTest } from './remote-timer-conformance.js';
export { runSharedConformance, ON_TIME_MS, type SharedBacking, type SharedNamespace } from './shared-conformance.js';
export { runStoreConformance, HOSTILE_NAMES, T0, pushSubscription, scheduleRecord, task, type StoreFactory, type StoreUnderTest } from './store-conformance/index.js';
