import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TimingWheel } from '../../src/core/wheel/timing-wheel.js';

const T0 = 1_000_000;
const YEAR = 365.25 * 24 * 3600 * 1000;

describe('TimingWheel', () => {
  it('plays the worked example of its header', () => {
    const wheel = new TimingWheel<string>({ startMs: 0, wheelSize: 4 });
    wheel.add(3, 'A');
    wheel.add(9, 'B');
    wheel.add(9, 'C');
    wheel.add(40, 'D');
    assert.equal(wheel.nextDeadline(), 3);
    assert.deepEqual(wheel.advance(3), ['A']);
    assert.equal(wheel.nextDeadline(), 8);
    assert.deepEqual(wheel.advance(8), []);
    assert.equal(wheel.nextDeadline(), 9);
    assert.deepEqual(wheel.advance(20), ['B', 'C']);
    assert.deepEqual(wheel.advance(45), ['D']);
    assert.equal(wheel.size, 0);
    assert.equal(wheel.nextDeadline(), undefined);
  });

  it('splits the next coarse bucket ahead of time, in slices, without changing what fires when', () => {
    // W 4: level 1 has 4-tick slots, level 2 has 16-tick slots. Ticks 20..30 share the
    // level-2 bucket [16, 32), the next one of level 2 while the clock is at 0.
    const wheel = new TimingWheel<number>({ startMs: 0, wheelSize: 4 });
    for (let at = 20; at <= 30; at++) wheel.add(at, at);
    assert.equal(wheel.nextDeadline(), 16, 'unsplit, the driver must wake at the coarse bucket');
    assert.equal(wheel.splitAhead(4), 4, 'a slice moves at most its limit');
    assert.equal(wheel.splitAhead(100), 7, 'the rest of the bucket');
    assert.equal(wheel.splitAhead(100), 0, 'nothing left to split until time moves');
    assert.equal(wheel.nextDeadline(), 20, 'split, the first deadline is the first value\'s 4-tick slot');
    assert.equal(wheel.size, 11);
    assert.deepEqual(wheel.advance(19), []);
    assert.deepEqual(wheel.advance(21), [20, 21]);
    assert.deepEqual(wheel.advance(30), [22, 23, 24, 25, 26, 27, 28, 29, 30]);
    assert.equal(wheel.size, 0);
  });

  it('returns everything overdue after a stall in (runAt, insertion) order', () => {
    const wheel = new TimingWheel<string>({ startMs: 0, wheelSize: 4 });
    for (const [at, v] of [[40, 'D'], [9, 'B'], [3, 'A'], [9, 'C'], [1000, 'E'], [1, 'Z']] as const) wheel.add(at, v);
    assert.deepEqual(wheel.advance(999), ['Z', 'A', 'B', 'C', 'D']);
    assert.deepEqual(wheel.advance(1000), ['E']);
  });

  it('never returns a value before its runAt, even with a coarse tick', () => {
    const wheel = new TimingWheel<number>({ startMs: 0, tickMs: 10 });
    wheel.add(11, 11);
    wheel.add(19, 19);
    wheel.add(20, 20);
    assert.deepEqual(wheel.advance(15), []);
    assert.deepEqual(wheel.advance(19), []);
    assert.deepEqual(wheel.advance(20), [11, 19, 20]);
  });

  it('hands back an already-due value to the caller instead of keeping it', () => {
    const wheel = new TimingWheel<string>({ startMs: T0 });
    assert.equal(wheel.add(T0, 'now'), undefined);
    assert.equal(wheel.add(T0 - 5_000, 'past'), undefined);
    assert.notEqual(wheel.add(T0 + 1, 'next'), undefined);
    assert.equal(wheel.size, 1);
  });

  it('cancels in O(1) and forgets empty buckets for nextDeadline', () => {
    const wheel = new TimingWheel<string>({ startMs: T0 });
    const a = wheel.add(T0 + 5, 'a')!;
    wheel.add(T0 + 50, 'b');
    assert.equal(wheel.nextDeadline(), T0 + 5);
    assert.equal(wheel.cancel(a), true);
    assert.equal(wheel.cancel(a), false);
    assert.ok(wheel.nextDeadline()! > T0 + 5);
    assert.deepEqual(wheel.advance(T0 + 100), ['b']);
  });

  it('cannot cancel what it has already returned', () => {
    const wheel = new TimingWheel<string>({ startMs: T0 });
    const a = wheel.add(T0 + 5, 'a')!;
    assert.deepEqual(wheel.advance(T0 + 5), ['a']);
    assert.equal(wheel.cancel(a), false);
  });

  it('keeps ten-year delays exact while near timers stay millisecond-precise', () => {
    const wheel = new TimingWheel<string>({ startMs: T0 });
    wheel.add(T0 + 10 * YEAR, 'decade');
    wheel.add(T0 + 1, 'ms');
    wheel.add(T0 + 10 * YEAR + 1, 'decade+1');
    assert.deepEqual(wheel.advance(T0 + 1), ['ms']);
    // Walk there the way a driver would: from deadline to deadline.
    let steps = 0;
    const fired: string[] = [];
    for (let d = wheel.nextDeadline(); d !== undefined; d = wheel.nextDeadline()) {
      const due = wheel.advance(d);
      for (const v of due) {
        assert.ok(d >= (v === 'decade' ? T0 + 10 * YEAR : T0 + 10 * YEAR + 1), `${v} not early`);
        fired.push(v);
      }
      steps++;
    }
    assert.deepEqual(fired, ['decade', 'decade+1']);
    assert.ok(steps < 20, `reached ten years in ${steps} wake-ups, not by ticking`);
  });

  it('tells the driver the next deadline without scanning, never after the first due value', () => {
    const wheel = new TimingWheel<number>({ startMs: 0 });
    const times = [5_000, 70, 64, 4_097, 300_000];
    for (const t of times) wheel.add(t, t);
    const order: number[] = [];
    let wakeups = 0;
    for (let d = wheel.nextDeadline(); d !== undefined; d = wheel.nextDeadline()) {
      assert.ok(d <= Math.min(...times.filter((t) => !order.includes(t))));
      order.push(...wheel.advance(d));
      wakeups++;
    }
    assert.deepEqual(order, [64, 70, 4_097, 5_000, 300_000]);
    assert.ok(wakeups <= 15);
  });

  it('rejects bad construction and non-finite times', () => {
    assert.throws(() => new TimingWheel({ startMs: 0, tickMs: 0 }), RangeError);
    assert.throws(() => new TimingWheel({ startMs: 0, wheelSize: 1 }), RangeError);
    assert.throws(() => new TimingWheel({ startMs: Number.NaN }), RangeError);
    const wheel = new TimingWheel({ startMs: 0 });
    assert.throws(() => wheel.add(Number.NaN, 1), RangeError);
    assert.throws(() => wheel.add(Number.POSITIVE_INFINITY, 1), RangeError);
  });
});
