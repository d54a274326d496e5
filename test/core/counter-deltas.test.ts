// The counter delta model: table-driven cases, then the laws every store relies on.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { applyStateDeltas, counterDeltas, CounterTally, stateDeltas, statsOfCounters, type StateOrNone } from '../../src/core/task/counter-deltas.js';
import { TASK_STATES, type TaskState } from '../../src/core/task/model.js';

const SIDES: StateOrNone[] = [...TASK_STATES, null];

describe('counter deltas', () => {
  it('are the -1 of the state left and the +1 of the state entered', () => {
    const cases: [StateOrNone, StateOrNone, [TaskState, number][]][] = [
      [null, 'pending', [['pending', 1]]],
      ['pending', 'reserved', [['pending', -1], ['reserved', 1]]],
      ['reserved', 'pending', [['reserved', -1], ['pending', 1]]],
      ['pending', 'pending', []],
      ['completed', null, [['completed', -1]]],
      [null, null, []],
    ];
    for (const [from, to, expected] of cases)
      assert.deepEqual(stateDeltas(from, to).map((d) => [d.state, d.n]), expected, `${from} -> ${to}`);
    assert.deepEqual(counterDeltas('mail', 'dead', 'cancelled'), [{ topic: 'mail', state: 'dead', n: -1 }, { topic: 'mail', state: 'cancelled', n: 1 }]);
  });

  it('sum to the count of tasks per state, whatever path each task took', () => {
    const path = fc.array(fc.constantFrom(...SIDES), { maxLength: 8 });
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('a', 'b'), path), { maxLength: 20 }), (tasks) => {
        const tally = new CounterTally();
        const perTopic = new Map<string, Record<TaskState, number>>();
        const expected: { topic: string; state: TaskState; n: number }[] = [];
        for (const [topic, states] of tasks) {
          let at: StateOrNone = null;
          for (const next of states) {
            tally.add(topic, at, next);
            applyStateDeltas((perTopic.get(topic) ?? perTopic.set(topic, { pending: 0, reserved: 0, completed: 0, dead: 0, cancelled: 0 }).get(topic))!, at, next);
            at = next;
          }
          if (at !== null) expected.push({ topic, state: at, n: 1 });
        }
        const stats = statsOfCounters(tally.entries());
        assert.deepEqual(stats, statsOfCounters(expected));
        assert.deepEqual(statsOfCounters([...perTopic].flatMap(([topic, counts]) => TASK_STATES.map((state) => ({ topic, state, n: counts[state] })))), stats);
      }),
    );
  });

  it('apply in place exactly as listed', () => {
    for (const from of SIDES)
      for (const to of SIDES) {
        const counts = { pending: 5, reserved: 5, completed: 5, dead: 5, cancelled: 5 };
        const expected = { ...counts };
        for (const { state, n } of stateDeltas(from, to)) expected[state] += 2 * n;
        applyStateDeltas(counts, from, to, 2);
        assert.deepEqual(counts, expected, `${from} -> ${to}`);
      }
  });

  it('merge as one batch would have summed them', () => {
    const a = new CounterTally();
    const b = new CounterTally();
    a.add('mail', null, 'pending', 3);
    b.add('mail', 'pending', 'reserved', 2);
    a.mergeInto(b);
    assert.deepEqual({ ...b.byTopic() }, { mail: { pending: 1, reserved: 2 } });
  });
});
