// Listing dead letters on the SQLite store: the dead tasks have an index of their own
// (migration 0004), the listing's plan searches it rather than walking every row, and it
// pages and filters by topic exactly as the general listing does.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { TaskStore } from '../../../src/core/ports/index.js';
import { openSqliteStore } from '../../../src/stores/sqlite/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { prepareStatements } from '../../../src/stores/sqlite/statements.js';
import { T0, task } from '../../../src/testing/store-conformance/index.js';

describe('sqlite store: dead letters', () => {
  let dir: string;
  let path: string;
  let store: TaskStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-dead-'));
    path = join(dir, 'd.db');
    store = await openSqliteStore(path, { clock: storeSystemClock });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** 60 tasks over two topics; every 7th dies (one attempt, failed), every 5th is cancelled, the rest stay pending. */
  async function populate(): Promise<{ dead: { id: string; topic: string }[] }> {
    const ids = Array.from({ length: 60 }, (_, i) => `t${String(i).padStart(3, '0')}`);
    const topicOf = (i: number): string => (i % 2 === 0 ? 'even' : 'odd');
    await store.tasks.schedule(
      ids.map((id, i) => task(id, { topic: topicOf(i), runAt: T0, maxAttempts: i % 7 === 0 ? 1 : 3 })),
      T0,
    );
    const dying = ids.filter((_, i) => i % 7 === 0);
    for (const claimed of await store.tasks.reserve(dying, T0)) {
      assert.deepEqual(await store.tasks.nack({ id: claimed.id, receipt: claimed.receipt!, now: T0 + 1, error: 'boom', random: 0 }), { status: 'dead', topic: claimed.topic });
    }
    for (const [i, id] of ids.entries()) if (i % 5 === 0 && i % 7 !== 0) await store.tasks.cancel(id, T0 + 2);
    return { dead: ids.flatMap((id, i) => (i % 7 === 0 ? [{ id, topic: topicOf(i) }] : [])) };
  }

  it('lists the dead tasks in id order, page by page, and by topic', async () => {
    const { dead } = await populate();
    const pages: string[][] = [];
    for (let after = ''; ; ) {
      const page = await store.tasks.list({ state: 'dead', limit: 3, afterId: after });
      if (page.length === 0) break;
      assert.ok(page.every((r) => r.state === 'dead' && r.lastError === 'boom'));
      pages.push(page.map((r) => r.id));
      after = page.at(-1)!.id;
    }
    assert.deepEqual(pages.flat(), dead.map((d) => d.id));
    assert.equal(pages[0]?.length, 3);
    assert.deepEqual(
      (await store.tasks.list({ state: 'dead', topic: 'odd', limit: 100 })).map((r) => r.id),
      dead.filter((d) => d.topic === 'odd').map((d) => d.id),
    );
    // Revived, a task leaves the listing.
    assert.equal((await store.tasks.retryDead(dead[0]!.id, T0 + 10, T0 + 3)).status, 'retried');
    assert.deepEqual(
      (await store.tasks.list({ state: 'dead', limit: 100 })).map((r) => r.id),
      dead.slice(1).map((d) => d.id),
    );
  });

  it('searches the partial index tasks_dead, not the whole table', async () => {
    await populate();
    await store.close();
    const db = new Database(path);
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${prepareStatements(db).listDead.source}`).all({ after: '', topic: null, limit: 10 }) as { detail: string }[])
      .map((row) => row.detail)
      .join('; ');
    db.close();
    assert.match(plan, /USING INDEX tasks_dead/);
    assert.doesNotMatch(plan, /SCAN tasks\b(?! USING INDEX tasks_dead)/);
    store = await openSqliteStore(path, { clock: storeSystemClock });
  });
});
