import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { FINE_WAIT_BURST_MS, FINE_WAIT_SHARE, FineWaitBudget, WallTimer, type TimerHost } from '../../src/engine/timers/wall-timer.js';

/** One immediate turn of the simulated event loop, in ms. */
const TURN_MS = 0.05;

/**
 * A simulated event loop: `t` is monotonic time and the wall clock is `t + offset` floored
 * to whole ms (Date.now()). As in libuv, a setTimeout counts its delay from the loop time,
 * whole ms taken up to `stale()` ms earlier in the turn, and fires on a whole ms of `t`:
 * up to a millisecond before its delay is up, measured from the call. It takes at least a
 * turn.
 */
class SimHost implements TimerHost {
  t: number;
  private seq = 0;
  private readonly timeouts = new Map<number, { at: number; callback: () => void }>();
  private immediates: { id: number; callback: () => void }[] = [];
  immediateTurns = 0;
  /** Time spent blocked in waitUntil. */
  blocked = 0;

  constructor(
    start: number,
    public offset: number,
    private readonly stale: () => number,
  ) {
    this.t = start;
  }

  now(): number {
    return Math.floor(this.t + this.offset);
  }
  /** The exact wall time, to measure lateness against. */
  wall(): number {
    return this.t + this.offset;
  }
  elapsed(): number {
    return this.t;
  }
  setTimeout(callback: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.timeouts.set(id, { at: Math.max(this.t + TURN_MS, Math.floor(this.t - this.stale()) + ms), callback });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timeouts.delete(handle as number);
  }
  setImmediate(callback: () => void): unknown {
    const id = ++this.seq;
    this.immediates.push({ id, callback });
    return id;
  }
  clearImmediate(handle: unknown): void {
    this.immediates = this.immediates.filter((i) => i.id !== handle);
  }
  waitUntil(at: number, maxMs: number): void {
    // Sim time moves only here and between turns: jump to `at` (the first instant the wall
    // clock reads it) or by maxMs, whichever comes first.
    const from = this.t;
    this.t = Math.min(from + maxMs, Math.max(from, at - this.offset));
    this.blocked += this.t - from;
  }
  get pending(): number {
    return this.timeouts.size + this.immediates.length;
  }

  /** Runs timers and immediates in order until none is left or the next is past `until`. */
  run(until = Number.POSITIVE_INFINITY): void {
    for (;;) {
      if (this.t >= until) return;
      if (this.immediates.length > 0) {
        const turn = this.immediates;
        this.immediates = [];
        this.t += TURN_MS;
        this.immediateTurns++;
        for (const immediate of turn) immediate.callback();
        continue;
      }
      let next: [number, { at: number; callback: () => void }] | undefined;
      for (const entry of this.timeouts) if (next === undefined || entry[1].at < next[1].at) next = entry;
      if (next === undefined || next[1].at > until) return;
      this.timeouts.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].callback();
    }
  }
}

describe('WallTimer', () => {
  it('never fires before its wall-clock ms, and within one turn of it while the budget lasts (property)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1_000, noNaN: true }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        fc.integer({ min: 1, max: 200 }),
        fc.array(fc.double({ min: 0, max: 0.99, noNaN: true }), { minLength: 1, maxLength: 8 }),
        (start, offset, delay, stale) => {
          let call = 0;
          const host = new SimHost(start, offset, () => stale[call++ % stale.length]!);
          const at = host.now() + delay;
          let firedAt = Number.NaN;
          new WallTimer(host, new FineWaitBudget(() => host.elapsed()), () => (firedAt = host.wall()), at);
          host.run();
          assert.ok(firedAt >= at, `fired at ${firedAt}, before ${at}`);
          assert.ok(firedAt - at <= TURN_MS + 1e-9, `fired ${firedAt - at} ms late`);
          assert.equal(host.pending, 0);
        },
      ),
    );
  });

  it('waits finely at most its share of the time when deadlines fall in every millisecond, and is never early', () => {
    // Each deadline is 1 ms after the last one fired: every timer starts in its last ms.
    const host = new SimHost(0, 0.5, () => 0);
    const budget = new FineWaitBudget(() => host.elapsed());
    let fired = 0;
    let late = 0;
    const arm = (at: number): void => {
      new WallTimer(
        host,
        budget,
        () => {
          assert.ok(host.now() >= at);
          fired++;
          if (host.wall() - at > TURN_MS + 1e-9) late++;
          if (host.t < 1_000) arm(host.now() + 1);
        },
        at,
      );
    };
    arm(host.now() + 1);
    host.run();
    const busy = host.blocked + host.immediateTurns * TURN_MS;
    assert.ok(busy <= 1_000 * FINE_WAIT_SHARE + FINE_WAIT_BURST_MS + 1, `busy ${busy} ms of ~1,000`);
    // The budget ran out: some timers slept their last ms instead, later but not early.
    assert.ok(late > 0);
    assert.ok(fired > 400, `fired ${fired}`);
  });

  it('a cancel before the first wake or while waiting out the last ms stops it for good', () => {
    for (const cancelAt of [0.2, 4.5]) {
      const host = new SimHost(0, 0, () => 0);
      let fired = false;
      const timer = new WallTimer(host, new FineWaitBudget(() => host.elapsed()), () => (fired = true), 5);
      host.run(cancelAt);
      // At 4.5 the timer is waiting out its last ms in turns; at 0.2 it still sleeps.
      assert.equal(host.immediateTurns > 0, cancelAt > 4);
      timer.cancel();
      host.run();
      assert.equal(fired, false);
      assert.equal(host.pending, 0);
    }
  });

  it('never calls back from inside the constructor, even for a time already reached', () => {
    for (const behind of [0, 1, 5]) {
      const host = new SimHost(100, 0.3, () => 0);
      let fired = false;
      // As when Date.now() moves on between the caller computing the time and the timer.
      new WallTimer(host, new FineWaitBudget(() => host.elapsed()), () => (fired = true), host.now() - behind);
      assert.equal(fired, false, `${behind} ms behind`);
      host.run();
      assert.equal(fired, true);
    }
  });

  it('fires at once when the wall clock is set back, instead of waiting the jump out', () => {
    const host = new SimHost(0, 10_000, () => 0);
    let firedAt = Number.NaN;
    new WallTimer(host, new FineWaitBudget(() => host.elapsed()), () => (firedAt = host.t), host.now() + 50);
    host.run(20);
    host.offset = 0; // set back ~10 s
    host.run();
    // It woke at ~49 ms (its setTimeout), saw the clock behind and fired; the caller re-arms.
    assert.ok(firedAt < 60, `fired at ${firedAt}`);
  });
});
