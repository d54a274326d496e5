// core/task/history.ts: the bound, the cut, the outcome of a push class.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HISTORY_ERROR_LIMIT, HISTORY_LIMIT, attemptEntry, historyError, isAttemptOutcome, pushOutcome, withAttempt } from '../../src/core/task/history.js';

describe('attempt history (core)', () => {
  it('keeps the last HISTORY_LIMIT entries, oldest first, and never changes the array it is given', () => {
    let history: readonly ReturnType<typeof attemptEntry>[] = [];
    const seen: (readonly unknown[])[] = [];
    for (let n = 1; n <= HISTORY_LIMIT + 2; n++) {
      seen.push(history);
      history = withAttempt(history, attemptEntry(n, n * 10, n * 10 + 3, 'nacked', 'x'));
    }
    assert.deepEqual(history.map((e) => e.attempt), Array.from({ length: HISTORY_LIMIT }, (_, i) => i + 3));
    assert.equal(seen[1]!.length, 1, 'an earlier array is untouched');
    assert.deepEqual(history.at(-1), { attempt: HISTORY_LIMIT + 2, startedAt: (HISTORY_LIMIT + 2) * 10, durationMs: 3, outcome: 'nacked', error: 'x' });
  });

  it('cuts errors to HISTORY_ERROR_LIMIT characters, an empty one is null, and a clock that went back is 0 ms', () => {
    assert.equal(historyError('a'.repeat(HISTORY_ERROR_LIMIT + 1)), 'a'.repeat(HISTORY_ERROR_LIMIT));
    assert.equal(historyError(''), null);
    assert.equal(withAttempt([], { attempt: 1, startedAt: 0, durationMs: 0, outcome: 'nacked', error: 'b'.repeat(600) })[0]!.error!.length, HISTORY_ERROR_LIMIT);
    assert.equal(attemptEntry(1, 100, 90, 'acked', null).durationMs, 0);
  });

  it('names push classes as the stores keep them', () => {
    assert.deepEqual(['http5xx', 'http4xx', 'http429', 'http3xx', 'timeout', 'connection'].map(pushOutcome), ['push:5xx', 'push:4xx', 'push:429', 'push:3xx', 'push:timeout', 'push:connection']);
    for (const ok of ['acked', 'nacked', 'expired', 'push:5xx']) assert.ok(isAttemptOutcome(ok), ok);
    for (const bad of ['', 'a,b', 'a|b', 'push:5xx:x', 'A', 'x'.repeat(25)]) assert.ok(!isAttemptOutcome(bad), bad);
  });
});
