/**
 * Property test: on random sequences of add / cancel / reschedule / advance / stall /
 * split-ahead, the timing wheel returns exactly what the naive reference timer returns, in
 * the same order; nothing is early, nothing live is lost, nothing cancelled comes back.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ReferenceTimer } from '../../src/core/wheel/reference-timer.js';
import type { TimerHandle } from '../../src/core/wheel/timer.js';
import { TimingWheel } from '../../src/core/wheel/timing-wheel.js';

type Op =
  | { kind: 'add'; delay: number }
  | { kind: 'cancel'; pick: number }
  | { kind: 'reschedule'; pick: number; delay: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'stall'; ms: number }
  | { kind: 'splitAhead'; limit: number };

// Delays mix the near (single ticks), the middle and the far (months), so every level is hit.
const delay = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.integer({ min: 0, max: 300 }),
  fc.integer({ min: 0, max: 100_000 }),
  fc.integer({ min: 0, max: 90 * 24 * 3600 * 1000 }),
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: delay.map((d) => ({ kind: 'add' as const, delay: d })) },
  { weight: 2, arbitrary: fc.nat().map((pick) => ({ kind: 'cancel' as const, pick })) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), delay).map(([pick, d]) => ({ kind: 'reschedule' as const, pick, delay: d })) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 200 }).map((ms) => ({ kind: 'advance' as const, ms })) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 40 * 24 * 3600 * 1000 }).map((ms) => ({ kind: 'stall' as const, ms })) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 50 }).map((limit) => ({ kind: 'splitAhead' as const, limit })) },
);

// Dense and near: many values within a few spans of a small wheel, time moving in small
// steps, and frequent splits ahead, so split-ahead buckets sit next to live ones.
const nearOp = (span: number): fc.Arbitrary<Op> =>
  fc.oneof(
    { weight: 5, arbitrary: fc.integer({ min: 0, max: span }).map((d) => ({ kind: 'add' as const, delay: d })) },
    { weight: 1, arbitrary: fc.nat().map((pick) => ({ kind: 'cancel' as const, pick })) },
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 5 }).map((ms) => ({ kind: 'advance' as const, ms })) },
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 8 }).map((limit) => ({ kind: 'splitAhead' as const, limit })) },
  );

interface Task {
  readonly name: number;
  readonly runAt: number;
}

function check(ops: Op[], tickMs: number, wheelSize: number, start: number): void {
  const wheel = new TimingWheel<Task>({ startMs: start, tickMs, wheelSize });
  const ref = new ReferenceTimer<Task>(start, tickMs);
  // Live tasks: name -> handles in both timers.
  const live = new Map<number, { w: TimerHandle<Task>; r: TimerHandle<Task> }>();
  let now = start;
  let names = 0;
  const dueNow: Task[] = [];

  const add = (runAt: number): void => {
    const task = { name: names++, runAt };
    const w = wheel.add(runAt, task);
    const r = ref.add(runAt, task);
    assert.equal(w === undefined, r === undefined, 'both agree whether the task is already due');
    if (w && r) live.set(task.name, { w, r });
    else dueNow.push(task);
  };

  for (const o of ops) {
    const keys = [...live.keys()];
    switch (o.kind) {
      case 'add':
        add(now + o.delay);
        break;
      case 'cancel': {
        if (keys.length === 0) break;
        const name = keys[o.pick % keys.length]!;
        const h = live.get(name)!;
        assert.equal(wheel.cancel(h.w), ref.cancel(h.r));
        live.delete(name);
        break;
      }
      case 'reschedule': {
        if (keys.length === 0) break;
        const name = keys[o.pick % keys.length]!;
        const h = live.get(name)!;
        wheel.cancel(h.w);
        ref.cancel(h.r);
        live.delete(name);
        add(now + o.delay);
        break;
      }
      case 'splitAhead': {
        // Splitting ahead moves values between buckets, never in or out of the wheel.
        const hadWork = wheel.hasSplitWork();
        const moved = wheel.splitAhead(o.limit);
        assert.ok(moved >= 0 && moved <= o.limit);
        assert.equal(moved > 0, hadWork, 'hasSplitWork says whether splitAhead has anything to move');
        break;
      }
      case 'advance':
      case 'stall': {
        now += o.ms;
        const fromWheel = wheel.advance(now);
        const fromRef = ref.advance(now);
        assert.deepEqual(
          fromWheel.map((t) => t.name),
          fromRef.map((t) => t.name),
          'same tasks, same (runAt, insertion) order',
        );
        for (const t of fromWheel) {
          assert.ok(t.runAt <= now, `task ${t.name} due at ${t.runAt} returned early at ${now}`);
          assert.ok(live.delete(t.name), `task ${t.name} returned twice or after cancel`);
        }
        break;
      }
    }
    assert.equal(wheel.size, ref.size);
    const deadline = wheel.nextDeadline();
    const refDeadline = ref.nextDeadline();
    assert.equal(deadline === undefined, refDeadline === undefined);
    if (deadline !== undefined && refDeadline !== undefined) assert.ok(deadline <= refDeadline, 'the driver never sleeps past a due task');
  }
  // Drain: following nextDeadline delivers every live task, each at or after its time.
  for (let d = wheel.nextDeadline(); d !== undefined; d = wheel.nextDeadline()) {
    now = Math.max(now, d);
    for (const t of wheel.advance(now)) {
      assert.ok(t.runAt <= now);
      assert.ok(live.delete(t.name));
    }
  }
  assert.equal(live.size, 0, 'every non-cancelled task is delivered');
  for (const t of dueNow) assert.ok(t.runAt <= now);
}

describe('TimingWheel against the reference timer', () => {
  it('agrees on random operation sequences (1 ms tick, 64 slots)', () => {
    fc.assert(fc.property(fc.array(op, { maxLength: 120 }), fc.integer({ min: 0, max: 2 ** 40 }), (ops, start) => check(ops, 1, 64, start)), {
      numRuns: 400,
    });
  });

  it('agrees with small wheels, where every delay cascades through many levels', () => {
    fc.assert(fc.property(fc.array(op, { maxLength: 120 }), fc.integer({ min: 2, max: 5 }), (ops, size) => check(ops, 1, size, 1_000)), {
      numRuns: 300,
    });
  });

  it('agrees when values split ahead share levels with values placed directly', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 4 }).chain((size) => fc.tuple(fc.constant(size), fc.array(nearOp(size ** 3 * 2), { maxLength: 200 }))),
        fc.integer({ min: 0, max: 1_000 }),
        ([size, ops], start) => check(ops, 1, size, start),
      ),
      { numRuns: 500 },
    );
  });

  it('agrees with coarse ticks, where rounding up keeps it from firing early', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 100 }), fc.integer({ min: 2, max: 50 }), fc.integer({ min: 0, max: 10_000 }), (ops, tick, start) =>
        check(ops, tick, 8, start),
      ),
      { numRuns: 300 },
    );
  });
});
