// The shared decisions of the check-then-change operations, against the state machine's
// table and a plain restatement of the failure rule.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decideDefer, decideExtend, decideFailure, decideMove, deferrableOr, EXPIRED_ERROR, movableOr } from '../../src/core/task/decide.js';
import { nextState, type TaskEvent } from '../../src/core/task/lifecycle.js';
import { TASK_STATES, type TaskState } from '../../src/core/task/model.js';

const EVENTS: TaskEvent[] = ['reserve', 'ack', 'retry', 'bury', 'cancel', 'reschedule', 'retryDead', 'defer', 'cancelDead'];
const backoff = { baseMs: 1_000, factor: 2, maxMs: 60_000, jitter: 0 };

describe('decideMove', () => {
  it('goes exactly where the state machine allows, says not_found without a task', () => {
    for (const event of EVENTS) {
      assert.equal(decideMove(undefined, event, 'refused'), 'not_found');
      for (const state of TASK_STATES) assert.equal(decideMove(state, event, 'refused'), nextState(state, event) === undefined ? 'refused' : 'go', `${event} from ${state}`);
    }
  });
});

describe('decideDefer', () => {
  it('goes only for a reserved task under its receipt', () => {
    assert.equal(decideDefer(undefined, false), 'not_found');
    for (const state of TASK_STATES) for (const holds of [true, false]) assert.equal(decideDefer(state, holds), state === 'reserved' && holds ? 'go' : 'stale');
  });
});

describe('decideFailure', () => {
  const facts = fc.record({
    state: fc.constantFrom<TaskState>(...TASK_STATES),
    attempts: fc.integer({ min: 1, max: 10 }),
    maxAttempts: fc.integer({ min: 1, max: 10 }),
    backoff: fc.constant(backoff),
    reservedUntil: fc.integer({ min: 0, max: 2_000 }),
  });
  const cause = fc.oneof(
    fc.constant({ kind: 'expire' as const }),
    fc.record({ kind: fc.constant('nack' as const), delayMs: fc.option(fc.integer({ min: 0, max: 5_000 }), { nil: undefined }), error: fc.option(fc.string(), { nil: undefined }), random: fc.double({ min: 0, max: 1, noNaN: true }) }),
  );

  it('matches the rule: stale unless reserved under the receipt; held for an expiry before it ran out; then retry while attempts remain, else dead', () => {
    fc.assert(
      fc.property(facts, fc.boolean(), fc.integer({ min: 0, max: 2_000 }), cause, (task, holds, now, why) => {
        const decision = decideFailure(task, holds, now, why);
        const stale = task.state !== 'reserved' || !holds;
        if (stale) return assert.deepEqual(decision, { status: 'stale' });
        if (why.kind === 'expire' && task.reservedUntil > now) return assert.deepEqual(decision, { status: 'held', reservedUntil: task.reservedUntil });
        const error = why.kind === 'expire' ? EXPIRED_ERROR : (why.error ?? null);
        if (task.attempts >= task.maxAttempts) return assert.deepEqual(decision, { status: 'dead', error });
        assert.equal(decision.status, 'retrying');
        if (decision.status !== 'retrying') return;
        assert.equal(decision.error, error);
        if (why.kind === 'expire') assert.equal(decision.runAt, now);
        else if (why.delayMs !== undefined) assert.equal(decision.runAt, now + why.delayMs);
        else assert.equal(decision.runAt, now + Math.min(backoff.maxMs, backoff.baseMs * 2 ** (task.attempts - 1)));
      }),
    );
  });

  it('says not_found without a task', () => assert.deepEqual(decideFailure(undefined, true, 0, { kind: 'expire' }), { status: 'not_found' }));
});

describe('decideExtend', () => {
  it('extends only a reservation in force: reserved under the receipt and not run out; not_found without a task', () => {
    fc.assert(
      fc.property(fc.constantFrom<TaskState>(...TASK_STATES), fc.option(fc.integer({ min: 0, max: 2_000 }), { nil: null }), fc.boolean(), fc.integer({ min: 0, max: 2_000 }), (state, reservedUntil, holds, now) => {
        const inForce = state === 'reserved' && holds && reservedUntil !== null && reservedUntil > now;
        assert.equal(decideExtend({ state, reservedUntil }, holds, now), inForce ? 'go' : 'stale');
      }),
    );
    assert.equal(decideExtend(undefined, true, 0), 'not_found');
  });
});

describe('movableOr and deferrableOr', () => {
  it('hand back the task itself where the decider says go, else what the caller is told', () => {
    for (const event of EVENTS) {
      assert.equal(movableOr(undefined, event, 'refused'), 'not_found');
      for (const state of TASK_STATES) {
        const found = { state };
        assert.equal(movableOr(found, event, 'refused'), nextState(state, event) === undefined ? 'refused' : found, `${event} from ${state}`);
      }
    }
    assert.equal(deferrableOr(undefined, true), 'not_found');
    for (const state of TASK_STATES)
      for (const holds of [true, false]) {
        const found = { state };
        assert.equal(deferrableOr(found, holds), state === 'reserved' && holds ? found : 'stale');
      }
  });
});
