import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_ENGINE_TUNING, resolveEngineTuning, resolveLimits, resolveTaskDefaults } from '../../src/core/options.js';
import { DEFAULT_LIMITS, DEFAULT_TASK_DEFAULTS } from '../../src/core/task/validate.js';

describe('engine options', () => {
  it('default every number that is not given, the loader option by option', () => {
    assert.deepEqual(resolveEngineTuning({}), DEFAULT_ENGINE_TUNING);
    assert.deepEqual(DEFAULT_ENGINE_TUNING, {
      tickMs: 1,
      retentionMs: 7 * 24 * 3_600_000,
      purgeIntervalMs: 60_000,
      purgeBatch: 10_000,
      storeRetryMs: 1_000,
      pushSyncMs: 1_000,
      pauseSyncMs: 1_000,
      pushBreaker: { failureThreshold: 5, cooldownMs: 30_000, probeWaitMs: 1_000 },
      pushMaxInFlight: 256,
      scheduleLeadMs: 1_500,
      scheduleGraceMs: 1_000,
      scheduleSyncMs: 5_000,
      loader: { pageSize: 2_000, maxReadyBacklog: 10_000, retryMs: 1_000 },
    });
    const tuned = resolveEngineTuning({ purgeIntervalMs: 5, loader: { pageSize: 10 } });
    assert.equal(tuned.purgeIntervalMs, 5);
    assert.deepEqual(tuned.loader, { ...DEFAULT_ENGINE_TUNING.loader, pageSize: 10 });
  });

  it('check the push breaker option by option', () => {
    assert.deepEqual(resolveEngineTuning({ pushBreaker: { cooldownMs: 5 } }).pushBreaker, { failureThreshold: 5, cooldownMs: 5, probeWaitMs: 1_000 });
    assert.throws(() => resolveEngineTuning({ pushBreaker: { failureThreshold: 0 } }), /pushBreaker\.failureThreshold: must be an integer from 1/);
    assert.throws(() => resolveEngineTuning({ pushBreaker: 3 as never }), /pushBreaker: must be an object/);
  });

  it('check pauseSyncMs like the other periods', () => {
    assert.equal(resolveEngineTuning({ pauseSyncMs: 250 }).pauseSyncMs, 250);
    assert.throws(() => resolveEngineTuning({ pauseSyncMs: 0 }), /pauseSyncMs: must be an integer from 1/);
  });

  it('check pushSyncMs like the other periods', () => {
    assert.equal(resolveEngineTuning({ pushSyncMs: 250 }).pushSyncMs, 250);
    assert.throws(() => resolveEngineTuning({ pushSyncMs: 0 }), /pushSyncMs: must be an integer from 1/);
  });

  it('check pushMaxInFlight: a positive integer', () => {
    assert.equal(resolveEngineTuning({ pushMaxInFlight: 1 }).pushMaxInFlight, 1);
    for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => resolveEngineTuning({ pushMaxInFlight: bad }), /pushMaxInFlight: must be an integer from 1/, String(bad));
  });

  it('merge limits and task defaults with theirs, checking each against the limits', () => {
    assert.deepEqual(resolveLimits(), DEFAULT_LIMITS);
    assert.equal(resolveLimits({ maxBatch: 2 }).maxBatch, 2);
    assert.deepEqual(resolveTaskDefaults(), DEFAULT_TASK_DEFAULTS);
    assert.equal(resolveTaskDefaults({ ttrMs: 1_000 }, resolveLimits({ maxTtrMs: 1_000 })).ttrMs, 1_000);
    assert.throws(() => resolveTaskDefaults({ maxAttempts: 11 }, resolveLimits({ maxAttempts: 10 })), /defaults\.maxAttempts/);
  });
});
