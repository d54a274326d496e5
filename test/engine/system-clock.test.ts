import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextImmediate, setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../../src/engine/timers/wall-clock.js';

describe('systemClock', () => {
  it('runs a zero delay as an immediate, ahead of a 1 ms timer set before it', async () => {
    const order: string[] = [];
    // Inside an I/O-free callback both would race; from a timer callback the immediate
    // always runs first, while a setTimeout(0) would wait for the next timers phase.
    await new Promise<void>((resolve) => {
      setTimeout(() => {
        setTimeout(() => {
          order.push('timeout 1 ms');
          resolve();
        }, 1);
        systemClock.setTimer(() => order.push('zero delay'), 0);
      }, 0);
    });
    assert.deepEqual(order, ['zero delay', 'timeout 1 ms']);
  });

  it('clears both kinds of token, and a fired or cleared token clears again harmlessly', async () => {
    let ran = 0;
    const immediate = systemClock.setTimer(() => ran++, 0);
    const timeout = systemClock.setTimer(() => ran++, 1);
    systemClock.clearTimer(immediate);
    systemClock.clearTimer(timeout);
    systemClock.clearTimer(immediate);
    const fired = systemClock.setTimer(() => ran++, 0);
    // Immediates run in order: once this one has, `fired` has too. (A sleep would not do:
    // on a stalled loop the timers phase, and so the sleep's end, comes first.)
    await nextImmediate();
    systemClock.clearTimer(fired);
    // Another immediate and timeout still run: the queues were not disturbed.
    let after = 0;
    systemClock.setTimer(() => after++, 0);
    // Awaited through its own callback: a sleep of Node's could end first on a stalled
    // loop, as the last turns of a timer's millisecond run as immediates (wall-timer.ts).
    await new Promise<void>((resolve) =>
      systemClock.setTimer(() => {
        after++;
        resolve();
      }, 1),
    );
    await sleep(5); // time for a cleared timer to have fired, had clearing failed
    assert.equal(ran, 1);
    assert.equal(after, 2);
  });
});
