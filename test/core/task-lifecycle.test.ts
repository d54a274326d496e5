import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { afterFailure, nextState, type TaskEvent } from '../../src/core/task/lifecycle.js';
import { TASK_STATES, type TaskState } from '../../src/core/task/model.js';

/** Every allowed transition; any other (state, event) pair is refused. */
const ALLOWED: [TaskState, TaskEvent, TaskState][] = [
  ['pending', 'reserve', 'reserved'],
  ['pending', 'cancel', 'cancelled'],
  ['pending', 'reschedule', 'pending'],
  ['reserved', 'ack', 'completed'],
  ['reserved', 'retry', 'pending'],
  ['reserved', 'bury', 'dead'],
  ['dead', 'retryDead', 'pending'],
  ['dead', 'cancelDead', 'cancelled'],
  ['pending', 'quarantine', 'dead'],
  ['reserved', 'quarantine', 'dead'],
];
const EVENTS: TaskEvent[] = ['reserve', 'ack', 'retry', 'bury', 'cancel', 'reschedule', 'retryDead', 'cancelDead', 'quarantine'];

describe('task state machine', () => {
  it('allows exactly the transitions of the diagram', () => {
    for (const state of TASK_STATES) {
      for (const event of EVENTS) {
        const expected = ALLOWED.find(([from, on]) => from === state && on === event)?.[2];
        assert.equal(nextState(state, event), expected, `${event} from ${state}`);
      }
    }
  });

  it('retries a failed attempt while attempts remain, then buries it', () => {
    assert.equal(afterFailure(1, 3), 'retry');
    assert.equal(afterFailure(3, 3), 'bury');
  });
});
