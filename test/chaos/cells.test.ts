// The PostgreSQL cells' judgement (chaos/cells.ts) on made-up facts: when lateness counts as
// back to normal, the backlog an overload leaves, and an attempt delivered twice.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addLine, newFacts, type Facts } from '../../chaos/checker.js';
import { attemptsDeliveredTwice, backlogAt, backToNormal, latenessByRunAt } from '../../chaos/cells.js';

/** Tasks due every 10 ms from `from` to `to`, each delivered `late(runAt)` ms after its runAt. */
function facts(from: number, to: number, late: (runAt: number) => number): Facts {
  const f = newFacts();
  for (let runAt = from, n = 0; runAt < to; runAt += 10, n++) {
    addLine(f, `S t${n} ${runAt}`);
    addLine(f, `D t${n} 1 ${runAt + late(runAt)}`);
  }
  return f;
}

describe('chaos cells: back to normal', () => {
  it('is the start of the first of 3 normal 1 s windows in a row after the stress', () => {
    // 2 s late until 12,000, on time after: windows from 10,000 are late, late, normal...
    const tasks = latenessByRunAt(facts(10_000, 20_000, (runAt) => (runAt < 12_000 ? 2_000 : 5)));
    assert.equal(backToNormal(tasks, 10_000, 20_000, 100), 2_000);
  });

  it('does not count a lone normal window between late ones', () => {
    const late = (runAt: number): number => (runAt < 12_000 || (runAt >= 13_000 && runAt < 14_000) ? 500 : 5);
    assert.equal(backToNormal(latenessByRunAt(facts(10_000, 20_000, late)), 10_000, 20_000, 100), 4_000);
  });

  it('is null when lateness never comes back within the recovery judged', () => {
    assert.equal(backToNormal(latenessByRunAt(facts(10_000, 14_000, () => 300)), 10_000, 14_000, 100), null);
  });

  it('counts a task never delivered as late without end', () => {
    const f = facts(10_000, 14_000, () => 5);
    addLine(f, 'S never-1 10500');
    addLine(f, 'S never-2 10600');
    // 100 tasks in the window, and these 2: the nearest-rank p99 of 102 is the 101st, one of them.
    assert.equal(backToNormal(latenessByRunAt(f), 10_000, 14_000, 100), 1_000);
  });
});

describe('chaos cells: backlog and attempts', () => {
  it('counts the tasks due (with the normal lateness allowed) and not yet delivered at a time', () => {
    const tasks = latenessByRunAt(facts(0, 1_000, (runAt) => 1_000 - runAt + 200)); // all delivered at 1,200
    assert.equal(backlogAt(tasks, 1_100, 100), 100);
    assert.equal(backlogAt(tasks, 600, 100), 51);
    assert.equal(backlogAt(tasks, 1_200, 100), 0);
  });

  it('finds the same attempt of a task delivered twice, and not a redelivery as the next attempt', () => {
    const f = newFacts();
    for (const line of ['S a 0', 'D a 1 10', 'D a 2 2000', 'S b 0', 'D b 1 10', 'D b 1 20']) addLine(f, line);
    assert.deepEqual(attemptsDeliveredTwice(f), ['b 1']);
  });
});
