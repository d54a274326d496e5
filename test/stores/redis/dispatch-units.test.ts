/** The shared dispatch's pure parts: which shards a reserve call asks, what a process keeps, what it knows of the lists, what its consumers ask for. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../src/core/manual-clock.js';
import type { TaskRecord } from '../../../src/core/task/model.js';
import { ConsumerDemand, LINGER_MS, PROMOTE_AHEAD } from '../../../src/coordination/consumer-demand.js';
import { KeptTasks } from '../../../src/coordination/kept-tasks.js';
import { ReadyWaiters } from '../../../src/coordination/ready-waiters.js';
import { planReserveSteps } from '../../../src/coordination/reserve-plan.js';

const record = (id: string): TaskRecord => ({ id }) as TaskRecord;

describe('reserve plan', () => {
  it('asks two shards for 32 each when their backlogs are unknown or long', () => {
    assert.deepEqual(planReserveSteps([3, 5, 7], 0, 64, 32, () => undefined), [
      { shard: 3, count: 32 },
      { shard: 5, count: 32 },
    ]);
    assert.deepEqual(planReserveSteps([3, 5, 7], 1, 64, 32, () => 500), [
      { shard: 5, count: 32 },
      { shard: 7, count: 32 },
    ]);
  });

  it('asks as many shards as short backlogs need to fill the fetch, in one round', () => {
    const backlog = new Map([
      [0, 3],
      [4, 2],
      [9, 5],
    ]);
    assert.deepEqual(planReserveSteps([0, 4, 9], 2, 64, 32, (s) => backlog.get(s)), [
      { shard: 9, count: 5 },
      { shard: 0, count: 3 },
      { shard: 4, count: 2 },
    ]);
  });

  it('never plans more than the fetch, and nothing without flagged shards', () => {
    const steps = planReserveSteps([1, 2, 3], 0, 40, 32, (s) => (s === 1 ? 10 : undefined));
    assert.deepEqual(steps, [
      { shard: 1, count: 10 },
      { shard: 2, count: 30 },
    ]);
    assert.deepEqual(planReserveSteps([], 0, 64, 32, () => undefined), []);
  });
});

describe('kept tasks', () => {
  it('hands out the oldest first and releases only those kept long enough', () => {
    const kept = new KeptTasks();
    kept.add('t', [record('a'), record('b')], 100);
    kept.add('t', [record('c')], 150);
    assert.equal(kept.oldestAt('t'), 100);
    // A release timer armed by the first tasks must not send back one kept a moment ago.
    assert.deepEqual(
      kept.handBackKeptBy('t', 120).map((r) => r.id),
      ['a', 'b'],
    );
    assert.equal(kept.size('t'), 1);
    assert.equal(kept.oldestAt('t'), 150);
    assert.deepEqual(
      kept.handOut('t', 5).map((r) => r.id),
      ['c'],
    );
    assert.equal(kept.size('t'), 0);
    assert.deepEqual(kept.topics(), []);
    assert.equal(kept.oldestAt('t'), undefined);
  });

  it('puts a backlog taken later ahead of the kept tasks, released with the oldest of them', () => {
    const kept = new KeptTasks();
    kept.add('t', [record('new-1'), record('new-2')], 100);
    kept.add('t', [record('new-3')], 180);
    kept.addFirst('t', [record('old-1'), record('old-2')], 200);
    assert.equal(kept.size('t'), 5);
    assert.equal(kept.oldestAt('t'), 100, 'counted as kept since the oldest already there');
    assert.deepEqual(
      kept.handBackKeptBy('t', 150).map((r) => r.id),
      ['old-1', 'old-2', 'new-1', 'new-2'],
    );
    assert.deepEqual(
      kept.handOut('t', 5).map((r) => r.id),
      ['new-3'],
    );
    // Into an empty topic: kept from `at`.
    kept.addFirst('u', [record('x')], 300);
    assert.equal(kept.oldestAt('u'), 300);
  });

  it('of a topic with priorities, puts a backlog taken later ahead of the kept tasks of its priority and lower only (ADR 0057)', () => {
    const ranked = (id: string, priority: number): TaskRecord => ({ id, priority }) as TaskRecord;
    const kept = new KeptTasks();
    kept.add('t', [ranked('k10', 10), ranked('k0', 0), ranked('k-5', -5)], 100);
    kept.addByPriority('t', [ranked('b0', 0), ranked('b10', 10), ranked('b0b', 0), ranked('b20', 20)], 200);
    assert.equal(kept.oldestAt('t'), 100, 'counted as kept since the oldest already there');
    assert.deepEqual(
      kept.handOut('t', 10).map((r) => r.id),
      ['b20', 'b10', 'k10', 'b0', 'b0b', 'k0', 'k-5'],
    );
    kept.addByPriority('u', [ranked('x', 1)], 300);
    assert.equal(kept.oldestAt('u'), 300);
  });
});

describe('ready waiters backlog', () => {
  it('adds the counts of local notifications to what the last reserve call left', () => {
    const waiters = new ReadyWaiters(4, 60_000, new ManualClock());
    assert.equal(waiters.backlog('t', 1), undefined);
    let epoch = waiters.epoch('t');
    waiters.update('t', 1, 0, epoch);
    assert.ok(!waiters.candidates('t').includes(1));
    waiters.notify('t', 1, 3);
    waiters.notify('t', 1, 2);
    assert.equal(waiters.backlog('t', 1), 5);
    epoch = waiters.epoch('t');
    waiters.update('t', 1, 4, epoch);
    assert.equal(waiters.backlog('t', 1), 4);
    waiters.update('t', 1, 0, epoch);
    assert.ok(!waiters.candidates('t').includes(1));
    assert.equal(waiters.backlog('t', 1), undefined);
  });

  it('forgets the count after a notification without one, or one that raced a reserve call', () => {
    const waiters = new ReadyWaiters(4, 60_000, new ManualClock());
    waiters.update('t', 2, 0, waiters.epoch('t'));
    waiters.notify('t', 2, 3);
    waiters.notify('t', 2);
    assert.equal(waiters.backlog('t', 2), undefined);
    assert.ok(waiters.candidates('t').includes(2));
    const epoch = waiters.epoch('t');
    waiters.notify('t', 2, 1);
    waiters.update('t', 2, 0, epoch);
    assert.ok(waiters.candidates('t').includes(2), 'a notification during the reserve call keeps the shard flagged');
    assert.equal(waiters.backlog('t', 2), undefined);
  });
});

describe('ready waiters on the store clock', () => {
  it('sweeps every shard after sweepMs of that clock, and not before', async () => {
    const clock = new ManualClock();
    const waiters = new ReadyWaiters(4, 2_000, clock);
    waiters.update('t', 0, 0, waiters.epoch('t'));
    waiters.update('t', 3, 0, waiters.epoch('t'));
    assert.deepEqual(waiters.candidates('t'), [1, 2]);
    let woken = false;
    const waiting = waiters.wait('t', new AbortController().signal).then(() => (woken = true));
    clock.advance(1_999);
    await Promise.resolve();
    assert.equal(woken, false);
    clock.advance(1);
    await waiting;
    assert.deepEqual(waiters.candidates('t').sort(), [0, 1, 2, 3], 'the sweep flags every shard');
    assert.equal(clock.pendingTimers, 0);
  });

  it('sweeps consumers that wait less than sweepMs at a time, sweepMs after the last sweep', async () => {
    const clock = new ManualClock();
    const waiters = new ReadyWaiters(4, 2_000, clock);
    for (const shard of [0, 1, 2, 3]) waiters.update('t', shard, 0, waiters.epoch('t'));
    // Waits of 500 ms, one after the other (reserve with waitMs 500): the 4th ends on the sweep.
    for (let call = 1; call <= 4; call++) {
      const abort = new AbortController();
      const waiting = waiters.wait('t', abort.signal);
      clock.advance(499);
      await Promise.resolve();
      assert.deepEqual(waiters.candidates('t'), [], `nothing flagged during call ${call}`);
      clock.advance(1);
      if (call < 4) abort.abort();
      await waiting;
    }
    assert.deepEqual(waiters.candidates('t').sort(), [0, 1, 2, 3], 'swept 2,000 ms after the first wait began');
    // A wait told to come back later than the sweep wakes at the sweep.
    for (const shard of [0, 1, 2, 3]) waiters.update('t', shard, 0, waiters.epoch('t'));
    const waiting = waiters.wait('t', new AbortController().signal, 10_000);
    clock.advance(2_000);
    await waiting;
    assert.deepEqual(waiters.candidates('t').sort(), [0, 1, 2, 3]);
    assert.equal(clock.pendingTimers, 0);
  });

  it('sweeps at a reserve call that does not wait, once sweepMs passed since the last sweep', () => {
    const clock = new ManualClock();
    const waiters = new ReadyWaiters(4, 2_000, clock);
    for (const shard of [0, 1, 2, 3]) waiters.update('t', shard, 0, waiters.epoch('t'));
    clock.advance(1_999);
    waiters.sweepIfDue('t');
    assert.deepEqual(waiters.candidates('t'), [], 'not due yet');
    clock.advance(1);
    waiters.sweepIfDue('t');
    assert.deepEqual(waiters.candidates('t').sort(), [0, 1, 2, 3]);
    for (const shard of [0, 1, 2, 3]) waiters.update('t', shard, 0, waiters.epoch('t'));
    clock.advance(1_999);
    waiters.sweepIfDue('t');
    assert.deepEqual(waiters.candidates('t'), [], 'the next one is 2,000 ms after this one');
  });

  it('wakes waiters at close and lets none wait again', async () => {
    const clock = new ManualClock();
    const waiters = new ReadyWaiters(4, 2_000, clock);
    const waiting = waiters.wait('t', new AbortController().signal);
    waiters.close();
    await waiting;
    await waiters.wait('t', new AbortController().signal);
    assert.equal(clock.pendingTimers, 0, 'no timer left behind');
  });
});

describe('consumer demand', () => {
  it('counts a call while it asks and for LINGER_MS of the store clock after', () => {
    const clock = new ManualClock();
    const demand = new ConsumerDemand(clock);
    const asking = demand.start('t', 2);
    assert.equal(demand.of('t'), 2 * PROMOTE_AHEAD);
    demand.stop('t', asking);
    clock.advance(LINGER_MS - 1);
    assert.equal(demand.of('t'), 2 * PROMOTE_AHEAD, 'still lingering');
    clock.advance(1);
    assert.equal(demand.of('t'), 0);
    demand.promise('t', 5);
    demand.promise('t', -2);
    assert.equal(demand.promised('t'), 3);
  });
});
