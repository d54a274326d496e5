// A queue on a ManualClock over a real SQLite file, opened by URL with no store options:
// the engine's time is the manual clock, the store's commits run on real turns of the event
// loop (its clock defaults to the system's), so `schedule()` answers without an advance and
// the task is delivered at its runAt on the manual clock, not before. Before, the store
// took the queue's clock and the first commit waited for an advance that never came.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ManualClock } from '../../../src/core/manual-clock.js';
import { DelayQueue } from '../../../src/open-queue.js';

const T0 = Date.UTC(2030, 0, 1);
const dir = mkdtempSync(join(tmpdir(), 'delayq-manual-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Lets I/O and promise chains run, one event-loop turn at a time, until `done()` or the cap. */
async function until(done: () => boolean, maxTurns = 100_000): Promise<void> {
  for (let turn = 0; turn < maxTurns && !done(); turn++) await new Promise<void>((resolve) => setImmediate(resolve));
  assert.ok(done(), 'condition not reached');
}

it('a ManualClock queue over SQLite commits without an advance and delivers on the manual time', async () => {
  const clock = new ManualClock(T0);
  const q = await DelayQueue.open({ store: `sqlite:${join(dir, 'q.db')}`, clock });
  try {
    let timer: NodeJS.Timeout | undefined;
    const scheduled = await Promise.race([
      q.schedule({ id: 'a', topic: 'jobs', delayMs: 5_000 }),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('schedule() did not answer within 5 s of real time')), 5_000))),
    ]).finally(() => clearTimeout(timer));
    assert.equal(scheduled.runAt, T0 + 5_000);
    const seen: number[] = [];
    q.work('jobs', () => void seen.push(clock.now()));
    clock.advance(4_999);
    for (let i = 0; i < 200; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    assert.deepEqual(seen, [], 'not delivered before its runAt');
    clock.advance(1);
    await until(() => seen.length === 1);
    assert.ok(seen[0]! >= T0 + 5_000);
  } finally {
    await q.close();
  }
});
