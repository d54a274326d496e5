import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/core/manual-clock.js';
import type { TimerRef } from '../../src/core/task/model.js';
import type { HomedRunRef, TimerHome } from '../../src/core/ports/index.js';
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

describe('TimerDriver with timer homes', () => {
  type Home = TimerHome;
  function homed(i: number, dueAt: number, home: Home): HomedRunRef {
    return { ...ref(i, dueAt), home };
  }

  it('keeps a homed run timer in its home, clears it when it fires, and finds it by id to cancel', () => {
    const clock = new ManualClock(T0);
    const homes = new Map<string, Home>();
    const fired: string[] = [];
    const driver = new TimerDriver({ clock }, { onDue: (refs) => fired.push(...refs.map((r) => r.id)), homes: { timerHome: (id) => homes.get(id) } });
    driver.start();
    for (let i = 0; i < 3; i++) {
      const home: Home = { runTimer: undefined };
      homes.set(`t${i}`, home);
      assert.equal(driver.addNew(homed(i, T0 + 10 + i, home)), true);
      assert.notEqual(home.runTimer, undefined, 'the handle is kept in the home');
    }
    assert.equal(driver.holds(homed(1, T0 + 11, homes.get('t1')!)), true);
    driver.remove('t1');
    assert.equal(homes.get('t1')!.runTimer, undefined);
    assert.equal(driver.holds(homed(1, T0 + 11, homes.get('t1')!)), false);
    assert.equal(driver.size, 2);
    clock.advance(20);
    assert.deepEqual(fired, ['t0', 't2'], 'the cancelled timer never fires');
    assert.equal(homes.get('t0')!.runTimer, undefined, 'a fired timer leaves its home');
    assert.equal(driver.size, 0);
    driver.stop();
  });

  it('keeps one timer per task across kinds: a ttr timer replaces a homed run timer and the other way round', () => {
    const clock = new ManualClock(T0);
    const home: Home = { runTimer: undefined };
    const fired: TimerRef[] = [];
    const driver = new TimerDriver({ clock }, { onDue: (refs) => fired.push(...refs), homes: { timerHome: (id) => (id === 't1' ? home : undefined) } });
    driver.start();
    driver.addNew(homed(1, T0 + 100, home));
    // A ttr ref carries no home: it lives in the map, and the run timer in the home goes.
    driver.add({ id: 't1', topic: 't', kind: 'ttr', dueAt: T0 + 50, seq: 0, receipt: 'r1' });
    assert.equal(home.runTimer, undefined);
    assert.equal(driver.size, 1);
    // A homed run ref replaces the ttr timer held in the map.
    driver.add(homed(1, T0 + 200, home));
    assert.equal(driver.size, 1);
    clock.advance(300);
    assert.deepEqual(
      fired.map((r) => [r.kind, r.dueAt - T0]),
      [['run', 200]],
    );
    driver.stop();
  });
});
