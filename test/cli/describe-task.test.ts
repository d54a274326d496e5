// `delayq get` without --json: the task's facts, then its attempt history as a table.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeTask } from '../../src/cli/commands/tasks.js';
import type { TaskView } from '../../src/client/index.js';

const T0 = Date.UTC(2030, 0, 1);
const base: TaskView = {
  id: 't1',
  topic: 'orders',
  payload: { n: 1 },
  runAt: T0,
  state: 'completed',
  attempts: 2,
  maxAttempts: 3,
  ttrMs: 30_000,
  backoff: { baseMs: 1_000, factor: 2, maxMs: 60_000, jitter: 0 },
  createdAt: T0,
  updatedAt: T0 + 5_000,
  reservedUntil: null,
  lastError: 'HTTP 503: down',
  url: null,
  priority: 0,
  history: [],
};

describe('delayq get (describeTask)', () => {
  it('prints no history section for a task without attempts', () => {
    assert.doesNotMatch(describeTask(base), /history/);
  });

  it('prints the attempts oldest first, one line each, the error on its line', () => {
    const text = describeTask({
      ...base,
      history: [
        { attempt: 1, startedAt: T0, durationMs: 120, outcome: 'push:5xx', error: 'HTTP 503:\ndown' },
        { attempt: 2, startedAt: T0 + 4_000, durationMs: 35, outcome: 'acked', error: null },
      ],
    });
    const lines = text.split('\n');
    const at = lines.indexOf('history (last 2 attempts, oldest first)');
    assert.ok(at > 0, text);
    assert.match(lines[at + 1]!, /^attempt\s+started\s+took\s+outcome\s+error$/);
    assert.match(lines[at + 2]!, /^1\s+2030-01-01T00:00:00\.000Z\s+120 ms\s+push:5xx\s+HTTP 503: down$/);
    assert.match(lines[at + 3]!, /^2\s+2030-01-01T00:00:04\.000Z\s+35 ms\s+acked\s+-$/);
  });
});
