import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { test } from 'node:test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../../src/stores/sqlite/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { runStoreConformance, scheduleRecord } from '../../../src/testing/store-conformance/index.js';

runStoreConformance('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-'));
  const store = await openSqliteStore(join(dir, 'tasks.db'), { clock: storeSystemClock });
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

test('an unreadable stored schedule reads as none, and putNewSchedules sets it again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-'));
  const path = join(dir, 'tasks.db');
  try {
    await (await openSqliteStore(path, { clock: storeSystemClock })).close();
    const db = new Database(path);
    db.prepare('INSERT INTO schedules (id, schedule, updated_at) VALUES (?, ?, ?)').run('x', '[2,"written by a later layout"]', 1);
    db.close();
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    try {
      assert.equal(await store.schedules.getSchedule('x'), null);
      const x = scheduleRecord('x');
      assert.deepEqual(await store.schedules.putNewSchedules([x]), [null]);
      assert.deepEqual(await store.schedules.getSchedule('x'), x);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
