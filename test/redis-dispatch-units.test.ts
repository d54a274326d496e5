/** The shared dispatch's pure parts: which shards a take asks, what a process keeps, what it knows of the lists. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskRecord } from '../src/core/task/model.js';
import { KeptTasks } from '../src/stores/redis/kept-tasks.js';
import { ReadyWaiters } from '../src/stores/redis/ready-waiters.js';
import { planTakes } from '../src/stores/redis/take-plan.js';

const record = (id: string, runAt = 0): TaskRecord => ({ id, runAt }) as TaskRecord;
const ids = (records: readonly TaskRecord[]): string[] => records.map((r) => r.id);

describe('take plan', () => {
  it('asks two shards for 32 each when their backlogs are unknown or long', () => {
    assert.deepEqual(planTakes([3, 5, 7], 0, 64, 32, () => undefined), [
      { shard: 3, count: 32 },
      { shard: 5, count: 32 },
    ]);
    assert.deepEqual(planTakes([3, 5, 7], 1, 64, 32, () => 500), [
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
    assert.deepEqual(planTakes([0, 4, 9], 2, 64, 32, (s) => backlog.get(s)), [
      { shard: 9, count: 5 },
      { shard: 0, count: 3 },
      { shard: 4, count: 2 },
    ]);
  });

  it('never plans more than the fetch, and nothing without flagged shards', () => {
    const steps = planTakes([1, 2, 3], 0, 40, 32, (s) => (s === 1 ? 10 : undefined));
    assert.deepEqual(steps, [
      { shard: 1, count: 10 },
      { shard: 2, count: 30 },
    ]);
    assert.deepEqual(planTakes([], 0, 64, 32, () => undefined), []);
  });
});

describe('kept tasks', () => {
  it('hands out the ones due first, whatever order they came in', () => {
    const kept = new KeptTasks();
    kept.add('t', [record('b', 20), record('d', 40)], 100);
    kept.add('t', [record('a', 10), record('c', 30), record('e', 40)], 150);
    kept.add('t', [record('f', 40)], 160);
    assert.equal(kept.size('t'), 6);
    assert.deepEqual(ids(kept.take('t', 4)), ['a', 'b', 'c', 'd']);
    // Ties stay in the order they came.
    assert.deepEqual(ids(kept.take('t', 5)), ['e', 'f']);
    assert.equal(kept.size('t'), 0);
    assert.deepEqual(kept.topics(), []);
    assert.equal(kept.oldestAt('t'), undefined);
  });

  it('gives back as many as were kept too long, the ones due last, and counts those that stay as kept anew', () => {
    const kept = new KeptTasks();
    kept.add('t', [record('a', 10), record('b', 20), record('c', 30)], 100);
    kept.add('t', [record('d', 40)], 180);
    assert.equal(kept.oldestAt('t'), 100);
    // Three were kept since 100 or before: three go back, the ones due last, in due order.
    assert.deepEqual(ids(kept.takeOverdue('t', 120, 200, 0)), ['b', 'c', 'd']);
    assert.equal(kept.oldestAt('t'), 200, "'a' stays, counted as kept from now");
    assert.deepEqual(ids(kept.takeOverdue('t', 150, 210, 0)), [], 'nothing kept too long any more');
    // A consumer that stalls gives everything back within two rounds.
    assert.deepEqual(ids(kept.takeOverdue('t', 300, 400, 0)), ['a']);
    assert.deepEqual(kept.topics(), []);
  });

  it('never keeps a task past the limit, however often it stays', () => {
    const kept = new KeptTasks();
    kept.add('t', [record('a', 10)], 100);
    kept.add('t', [record('b', 20)], 190);
    // One overdue: 'b' (due last) goes back, 'a' is renewed.
    assert.deepEqual(ids(kept.takeOverdue('t', 100, 200, 50)), ['b']);
    kept.add('t', [record('c', 30)], 290);
    // Again one overdue, but 'a' was first kept at 100, at or before the limit: it goes
    // back too, with 'c', the one due last.
    assert.deepEqual(ids(kept.takeOverdue('t', 200, 300, 100)), ['a', 'c']);
    assert.equal(kept.size('t'), 0);
  });

  it('keeps a backlog taken from the lists in its due places among the kept ones', () => {
    const kept = new KeptTasks();
    kept.add('t', [record('new-1', 50), record('new-2', 60)], 100);
    kept.add('t', [record('old-1', 10), record('old-2', 20), record('mid', 55)], 150);
    assert.deepEqual(ids(kept.take('t', 10)), ['old-1', 'old-2', 'new-1', 'mid', 'new-2']);
  });
});

describe('ready waiters backlog', () => {
  it('adds the counts of local notifications to what the last take left', () => {
    const waiters = new ReadyWaiters(4, 60_000);
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

  it('forgets the count after a notification without one, or one that raced a take', () => {
    const waiters = new ReadyWaiters(4, 60_000);
    waiters.update('t', 2, 0, waiters.epoch('t'));
    waiters.notify('t', 2, 3);
    waiters.notify('t', 2);
    assert.equal(waiters.backlog('t', 2), undefined);
    assert.ok(waiters.candidates('t').includes(2));
    const epoch = waiters.epoch('t');
    waiters.notify('t', 2, 1);
    waiters.update('t', 2, 0, epoch);
    assert.ok(waiters.candidates('t').includes(2), 'a notification during the take keeps the shard flagged');
    assert.equal(waiters.backlog('t', 2), undefined);
  });
});
