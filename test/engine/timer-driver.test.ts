import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/core/manual-clock.js';
import type { TimerRef } from '../../src/core/task/model.js';
import type { RunTimerHandle, RunTimerIndex } from '../../src/core/ports/index.js';
import { SPLIT_SLICE, TimerDriver } from '../../src/engine/timers/timer-driver.js';

const T0 = Date.UTC(2030, 0, 1);

function ref(i: number, dueAt: number): TimerRef {
  return { id: `t${i}`, topic: 't', kind: 'run', dueAt, seq: i, receipt: null };
}

describe('TimerDriver', () => {
  it('splits a coarse bucket ahead in slices between turns, and every timer still fires on time, in order', () => {
    const clock = new ManualClock(T0);
    const fired: { id: string; at: number; dueAt: number }[] = [];
    const driver = new TimerDriver({ clock }, { onDue: (refs) => {
      for (const r of refs) fired.push({ id: r.id, at: clock.now(), dueAt: r.dueAt });
    } });
    driver.start();
    // 3 slices' worth of timers, all in the level-2 bucket that starts 4,096 ms out.
    const count = 3 * SPLIT_SLICE;
    for (let i = 0; i < count; i++) assert.equal(driver.addNew(ref(i, T0 + 5_000 + (i % 500))), true);
    assert.equal(clock.pendingTimers, 2, 'the deadline timer and one split slice');
    // Count the slices: each is a zero-delay timer of its own, a turn of the event loop.
    let slices = 0;
    const setTimer = clock.setTimer.bind(clock);
    clock.setTimer = (callback, delayMs) => {
      if (delayMs === 0) slices++;
      return setTimer(callback, delayMs);
    };
    clock.advance(1);
    assert.equal(slices, 2, 'the first slice queues the rest, one at a time, while work is left');
    assert.equal(clock.pendingTimers, 1, 'nothing left to split: only the deadline timer');
    assert.equal(fired.length, 0);
    clock.advance(5_000 + 500);
    assert.equal(fired.length, count);
    for (const f of fired) assert.equal(f.at, f.dueAt, `${f.id} fired at its time`);
    for (let i = 1; i < fired.length; i++) assert.ok(fired[i - 1]!.dueAt <= fired[i]!.dueAt, 'in time order');
    driver.stop();
  });

  it('leaves no timer behind when stopped', () => {
    const clock = new ManualClock(T0);
    const driver = new TimerDriver({ clock }, { onDue: () => undefined });
    driver.start();
    driver.addNew(ref(1, T0 + 5_000));
    assert.equal(clock.pendingTimers, 2, 'the deadline timer and a split slice');
    driver.stop();
    assert.equal(clock.pendingTimers, 0);
  });

  it('queues no split slice while nothing is due to be split', () => {
    const clock = new ManualClock(T0);
    const driver = new TimerDriver({ clock }, { onDue: () => undefined });
    driver.start();
    // An hour out: in a level-3 bucket that is not the next one.
    for (let i = 0; i < 100; i++) driver.addNew(ref(i, T0 + 3_600_000 + i));
    assert.equal(clock.pendingTimers, 1, 'the deadline timer only');
    driver.stop();
  });
});

describe('TimerDriver over a store that keeps run timers (RunTimerIndex)', () => {
  /** A store's index, as the memory store keeps it: a slot per task, found by id; and what the driver asked of it. */
  function slots(): { index: RunTimerIndex; held: Map<string, RunTimerHandle>; known: Set<string>; calls: string[] } {
    const held = new Map<string, RunTimerHandle>();
    const known = new Set<string>();
    const calls: string[] = [];
    const index: RunTimerIndex = {
      get: (r) => (calls.push(`get ${r.id}`), held.get(r.id)),
      set: (r, handle) => {
        calls.push(`set ${r.id}`);
        if (!known.has(r.id)) return false;
        held.set(r.id, handle);
        return true;
      },
      take: (id) => {
        calls.push(`take ${id}`);
        const handle = held.get(id);
        held.delete(id);
        return handle;
      },
    };
    return { index, held, known, calls };
  }

  it('keeps a run timer in the store, clears it when it fires, and takes it by id to cancel', () => {
    const clock = new ManualClock(T0);
    const { index, held, known } = slots();
    const fired: string[] = [];
    const driver = new TimerDriver({ clock }, { onDue: (refs) => fired.push(...refs.map((r) => r.id)), runTimers: index });
    driver.start();
    for (let i = 0; i < 3; i++) {
      known.add(`t${i}`);
      assert.equal(driver.addNew(ref(i, T0 + 10 + i)), true);
      assert.notEqual(held.get(`t${i}`), undefined, 'the handle is kept by the store');
    }
    assert.equal(driver.holds(ref(1, T0 + 11)), true);
    driver.remove('t1');
    assert.equal(held.get('t1'), undefined);
    assert.equal(driver.holds(ref(1, T0 + 11)), false);
    assert.equal(driver.size, 2);
    clock.advance(20);
    assert.deepEqual(fired, ['t0', 't2'], 'the cancelled timer never fires');
    assert.equal(held.size, 0, 'a fired timer leaves the store');
    assert.equal(driver.size, 0);
    driver.stop();
  });

  it('keeps a run timer itself when the store has no such task, and still cancels it', () => {
    const clock = new ManualClock(T0);
    const { index, held } = slots();
    const fired: string[] = [];
    const driver = new TimerDriver({ clock }, { onDue: (refs) => fired.push(...refs.map((r) => r.id)), runTimers: index });
    driver.start();
    driver.addNew(ref(1, T0 + 10));
    driver.addNew(ref(2, T0 + 10));
    assert.equal(held.size, 0);
    assert.equal(driver.holds(ref(1, T0 + 10)), true);
    driver.remove('t1');
    clock.advance(20);
    assert.deepEqual(fired, ['t2']);
    driver.stop();
  });

  it('keeps one timer per task across kinds: a ttr timer replaces a run timer the store holds and the other way round', () => {
    const clock = new ManualClock(T0);
    const { index, held, known } = slots();
    known.add('t1');
    const fired: TimerRef[] = [];
    const driver = new TimerDriver({ clock }, { onDue: (refs) => fired.push(...refs), runTimers: index });
    driver.start();
    driver.addNew(ref(1, T0 + 100));
    // A ttr timer lives in the driver's map, and the run timer the store held goes.
    driver.add({ id: 't1', topic: 't', kind: 'ttr', dueAt: T0 + 50, seq: 0, receipt: 'r1' });
    assert.equal(held.get('t1'), undefined);
    assert.equal(driver.size, 1);
    // A run ref replaces the ttr timer held in the map.
    driver.add(ref(1, T0 + 200));
    assert.equal(driver.size, 1);
    clock.advance(300);
    assert.deepEqual(
      fired.map((r) => [r.kind, r.dueAt - T0]),
      [['run', 200]],
    );
    driver.stop();
  });
});
