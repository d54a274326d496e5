/**
 * The push circuit breaker (core/push-breaker.ts): examples on a ManualClock, then
 * fast-check runs of random pushes, answers and waits against a tiny reference model.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ManualClock } from '../../src/core/manual-clock.js';
import { CircuitBreakers, type Admission, type BreakerOptions, type BreakerOutcome } from '../../src/core/push-breaker.js';
import { breakerOutcome, classifyPush } from '../../src/core/push.js';

const T0 = Date.UTC(2030, 0, 1);
const O = 'https://a.example.com';
const OPTIONS: BreakerOptions = { failureThreshold: 3, cooldownMs: 10_000, probeWaitMs: 500 };

describe('push circuit breaker', () => {
  it('opens after failureThreshold consecutive failures, holds pushes back until the cooldown ends, then lets one probe go', () => {
    const clock = new ManualClock(T0);
    const b = new CircuitBreakers(OPTIONS);
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(b.admit(O, clock.now()), { admitted: true, probe: false });
      b.record(O, 'failure', clock.now(), false);
    }
    assert.deepEqual(b.view(O, clock.now()), { state: 'closed', consecutiveFailures: 2, openUntil: null });
    b.record(O, 'failure', clock.now(), false);
    assert.deepEqual(b.view(O, clock.now()), { state: 'open', consecutiveFailures: 3, openUntil: T0 + 10_000 });
    assert.deepEqual(b.admit(O, clock.now()), { admitted: false, retryAt: T0 + 10_000 });
    assert.deepEqual(b.admit('https://b.example.com', clock.now()), { admitted: true, probe: false }, 'other origins go on');
    clock.advance(9_999);
    assert.deepEqual(b.admit(O, clock.now()), { admitted: false, retryAt: T0 + 10_000 });
    clock.advance(1);
    assert.equal(b.view(O, clock.now()).state, 'half-open');
    assert.deepEqual(b.admit(O, clock.now()), { admitted: true, probe: true });
    assert.deepEqual(b.admit(O, clock.now()), { admitted: false, retryAt: clock.now() + 500 }, 'one probe at a time');
    b.record(O, 'success', clock.now(), true);
    assert.deepEqual(b.view(O, clock.now()), { state: 'closed', consecutiveFailures: 0, openUntil: null });
    assert.deepEqual(b.admit(O, clock.now()), { admitted: true, probe: false });
    assert.deepEqual(b.origins(), [], 'a healthy origin keeps no entry');
  });

  it('a failed probe opens it for another cooldown; a neutral probe frees the slot for the next', () => {
    const clock = new ManualClock(T0);
    const b = new CircuitBreakers(OPTIONS);
    for (let i = 0; i < 3; i++) b.record(O, 'failure', clock.now(), false);
    clock.advance(10_000);
    assert.equal(b.admit(O, clock.now()).admitted, true);
    b.record(O, 'neutral', clock.now(), true);
    assert.deepEqual(b.admit(O, clock.now()), { admitted: true, probe: true });
    b.record(O, 'failure', clock.now(), true);
    assert.deepEqual(b.admit(O, clock.now()), { admitted: false, retryAt: clock.now() + 10_000 });
  });

  it('any answer but a failure ends a run; late results of pushes sent before it opened change nothing', () => {
    const b = new CircuitBreakers(OPTIONS);
    b.record(O, 'failure', T0, false);
    b.record(O, 'failure', T0, false);
    b.record(O, 'success', T0, false);
    b.record(O, 'failure', T0, false);
    assert.equal(b.view(O, T0).state, 'closed');
    b.record(O, 'failure', T0, false);
    b.record(O, 'failure', T0, false);
    assert.equal(b.view(O, T0).state, 'open');
    b.record(O, 'success', T0 + 1, false);
    assert.equal(b.view(O, T0 + 1).state, 'open');
    b.record(O, 'success', T0 + 1, true);
    assert.equal(b.view(O, T0 + 1).state, 'open', 'a probe result when no probe is out is ignored');
  });

  it('classifies results: connection errors, timeouts and 5xx are failures; answers are successes; pushes that never reached it are neutral', () => {
    const cases: [Parameters<typeof classifyPush>[0], string, BreakerOutcome][] = [
      [{ kind: 'failure', reason: 'timeout after 10000 ms' }, 'timeout', 'failure'],
      [{ kind: 'failure', reason: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9' }, 'connection', 'failure'],
      [{ kind: 'failure', reason: 'refused destination 10.0.0.1: private' }, 'refused', 'neutral'],
      [{ kind: 'failure', reason: 'aborted' }, 'aborted', 'neutral'],
      [{ kind: 'response', status: 204, retryAfterMs: null, bodyStart: '' }, 'ok', 'success'],
      [{ kind: 'response', status: 503, retryAfterMs: null, bodyStart: '' }, 'http5xx', 'failure'],
      [{ kind: 'response', status: 429, retryAfterMs: 5, bodyStart: '' }, 'http429', 'success'],
      [{ kind: 'response', status: 404, retryAfterMs: null, bodyStart: '' }, 'http4xx', 'success'],
      [{ kind: 'response', status: 302, retryAfterMs: null, bodyStart: '' }, 'http3xx', 'success'],
    ];
    for (const [response, cls, outcome] of cases) {
      assert.equal(classifyPush(response), cls);
      assert.equal(breakerOutcome(classifyPush(response)), outcome, cls);
    }
  });

  describe('against a reference model (fast-check)', () => {
    /** The rules of the header, for one origin, as plainly as they can be written. */
    class Model {
      failures = 0;
      openedAt: number | null = null;
      probeOut = false;
      constructor(private readonly o: BreakerOptions) {}
      admit(now: number): Admission {
        if (this.openedAt === null) return { admitted: true, probe: false };
        if (now < this.openedAt + this.o.cooldownMs) return { admitted: false, retryAt: this.openedAt + this.o.cooldownMs };
        if (this.probeOut) return { admitted: false, retryAt: now + this.o.probeWaitMs };
        this.probeOut = true;
        return { admitted: true, probe: true };
      }
      record(outcome: BreakerOutcome, now: number, probe: boolean): void {
        if (probe) {
          if (!this.probeOut) return;
          this.probeOut = false;
          if (outcome === 'success') [this.failures, this.openedAt] = [0, null];
          if (outcome === 'failure') this.openedAt = now;
          return;
        }
        if (this.openedAt !== null || outcome === 'neutral') return;
        if (outcome === 'success') this.failures = 0;
        else if (++this.failures >= this.o.failureThreshold) this.openedAt = now;
      }
      state(now: number): string {
        if (this.openedAt === null) return 'closed';
        return now < this.openedAt + this.o.cooldownMs ? 'open' : 'half-open';
      }
    }

    type Step = { kind: 'wait'; ms: number } | { kind: 'push' } | { kind: 'answer'; pick: number; outcome: BreakerOutcome };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant('wait' as const), ms: fc.oneof(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 0, max: 15_000 })) }),
      fc.record({ kind: fc.constant('push' as const) }),
      fc.record({ kind: fc.constant('answer' as const), pick: fc.nat(), outcome: fc.constantFrom<BreakerOutcome>('success', 'failure', 'failure', 'neutral') }),
    );
    const options = fc.record({ failureThreshold: fc.integer({ min: 1, max: 5 }), cooldownMs: fc.integer({ min: 1, max: 12_000 }), probeWaitMs: fc.integer({ min: 1, max: 1_000 }) });

    it('admits, holds back and reports exactly as the model does, with never two probes out', () => {
      fc.assert(
        fc.property(options, fc.array(step, { maxLength: 200 }), (o, steps) => {
          const clock = new ManualClock(T0);
          const real = new CircuitBreakers(o);
          const model = new Model(o);
          const out: boolean[] = []; // pushes admitted and not answered yet: probe or not
          for (const s of steps) {
            if (s.kind === 'wait') clock.advance(s.ms);
            else if (s.kind === 'push') {
              const got = real.admit(O, clock.now());
              assert.deepEqual(got, model.admit(clock.now()));
              if (got.admitted) out.push(got.probe);
              else assert.ok(got.retryAt > clock.now(), 'held back until later, never now');
              assert.ok(out.filter((p) => p).length <= 1, 'at most one probe out');
            } else if (out.length > 0) {
              const [probe] = out.splice(s.pick % out.length, 1);
              real.record(O, s.outcome, clock.now(), probe!);
              model.record(s.outcome, clock.now(), probe!);
            }
            assert.equal(real.view(O, clock.now()).state, model.state(clock.now()));
          }
        }),
        { numRuns: 300 },
      );
    });
  });
});
