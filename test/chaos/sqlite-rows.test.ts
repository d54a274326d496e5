// The chaos runner's reading of a SQLite store (chaos/sqlite-rows.ts): where each offending
// task stands, so a kept round says whether a task was lost, is still owed, or was
// delivered with its fact missing; and what a running store still owes, for the drain.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { owed, standings } from '../../chaos/sqlite-rows.js';
import { DEFAULT_BACKOFF } from '../../src/core/task/backoff.js';
import type { NewTaskRecord } from '../../src/core/task/model.js';
import { openSqliteStore } from '../../src/stores/sqlite/index.js';
import { storeSystemClock } from '../../src/stores/system-clock.js';

const T0 = Date.UTC(2030, 0, 1);

function task(id: string, runAt: number): NewTaskRecord {
  return { id, topic: 'chaos', payload: '{}', runAt, maxAttempts: 1_000, ttrMs: 1_500, backoff: DEFAULT_BACKOFF };
}

describe('chaos: the rows of offending tasks', () => {
  const dir = mkdtempSync(join(tmpdir(), 'delayq-chaos-rows-test-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads each task as lost, parked, owed or acked, and counts what a running store still owes', async () => {
    const file = join(dir, 'q.db');
    const store = await openSqliteStore(file, { clock: storeSystemClock });
    await store.tasks.schedule([task('due', T0 - 10), task('held', T0 - 10), task('done', T0 - 10), task('far', T0 + 30 * 86_400_000)], T0);
    // The first load unparks what is near (a new file parks every task until then); 'far' stays parked.
    await store.tasks.loadDue(T0 + 60_000, null, 100);
    const reserved = await store.tasks.reserve(['held', 'done'], T0);
    const done = reserved.find((r) => r.id === 'done');
    assert.ok(done?.receipt);
    // The ack commits, and the reservations with it.
    assert.equal((await store.tasks.ack('done', done.receipt, T0 + 5)).status, 'acked');

    const ids = ['due', 'held', 'done', 'far', 'never'];
    assert.equal(owed(file, ids), 3, 'due, held and far are pending or reserved, read while the store is open');
    assert.equal(owed(join(dir, 'absent.db'), ids), null, 'no file: nothing to say');
    await store.close();

    const byId = new Map(standings(file, ids, T0 + 1_000).map((s) => [s.id, s]));
    assert.match(byId.get('due')!.reading, /^pending, due 1010 ms before the check/);
    assert.match(byId.get('held')!.reading, /^reserved \(attempt 1, receipt \S+\) until 500 ms after the check: still owed/);
    assert.match(byId.get('done')!.reading, /^completed by receipt \S+ .*its delivery fact is missing/);
    assert.match(byId.get('far')!.reading, /^pending, parked in bucket \d+ .*in a parked run/);
    assert.equal(byId.get('far')!.inParkedRun, true);
    assert.match(byId.get('never')!.reading, /^no row/);
    assert.equal(byId.get('never')!.row, null);
  });
});
