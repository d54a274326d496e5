// Parking: far-future tasks are filed by bucket, not in the due index, and moved there
// before their time comes; loadDue sees every pending task either way, in order.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { TaskStore } from '../src/core/ports.js';
import { DEFAULT_BACKOFF } from '../src/core/task/backoff.js';
import type { NewTaskRecord, TimerRef } from '../src/core/task/model.js';
import { openSqliteStore } from '../src/stores/sqlite/index.js';
import { BUCKET_MS, UNPARK_BATCH, bucketOf } from '../src/stores/sqlite/parking.js';

const B = bucketOf(Date.UTC(2030, 0, 1)) + 1;
const START = B * BUCKET_MS;

function task(id: string, runAt: number): NewTaskRecord {
  return { id, topic: 't', payload: '{}', runAt, maxAttempts: 3, ttrMs: 5_000, backoff: DEFAULT_BACKOFF };
}

async function loadAll(store: TaskStore, until: number): Promise<TimerRef[]> {
  const out: TimerRef[] = [];
  let after: { dueAt: number; seq: number } | null = null;
  for (;;) {
    const page = await store.loadDue(until, after, 200);
    out.push(...page);
    if (page.length < 200) return out;
    const last = page[page.length - 1]!;
    after = { dueAt: last.dueAt, seq: last.seq };
  }
}

function parkedRows(path: string): number {
  const db = new Database(path, { readonly: true });
  const n = (db.prepare('SELECT count(*) AS n FROM tasks WHERE park_bucket IS NOT NULL').get() as { n: number }).n;
  db.close();
  return n;
}

describe('sqlite store: parking far-future tasks', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-park-'));
    path = join(dir, 'p.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('unparks bucket by bucket, in batches, and loads every pending task in (dueAt, seq) order', async () => {
    let store = await openSqliteStore(path, {});
    // Before the first loadDue every new task parks: more than one unpark batch in bucket B,
    // a few in later buckets, inserted out of time order.
    const inB = Array.from({ length: UNPARK_BATCH * 2 + 37 }, (_, i) => task(`b${i}`, START + ((i * 7_919) % 1_000_000)));
    const later = [task('b1-x', START + BUCKET_MS + 5), task('b5-x', START + 5 * BUCKET_MS + 1), task('b1-y', START + BUCKET_MS + 5)];
    await store.schedule([...later, ...inB], START - 1_000);
    await store.close();
    assert.equal(parkedRows(path), inB.length + later.length);

    store = await openSqliteStore(path, {});
    const firstWindow = await loadAll(store, START + BUCKET_MS);
    assert.deepEqual(
      firstWindow.map((r) => r.id),
      [...inB].sort((x, y) => x.runAt - y.runAt || Number(x.id.slice(1)) - Number(y.id.slice(1))).map((t) => t.id),
    );
    // Now inside the frontier: a new task in bucket B goes straight to the due index...
    await store.schedule([task('b-new', START + 10)], START);
    // ...and one far away parks.
    await store.schedule([task('b9-x', START + 9 * BUCKET_MS)], START);
    assert.equal(await store.cancel('b5-x', START), 'cancelled');
    const all = await loadAll(store, Number.POSITIVE_INFINITY);
    assert.equal(all.length, inB.length + 4);
    assert.deepEqual(all.slice(-3).map((r) => r.id), ['b1-x', 'b1-y', 'b9-x']);
    assert.ok(all.some((r) => r.id === 'b-new'));
    for (let i = 1; i < all.length; i++) {
      const a = all[i - 1]!;
      const b = all[i]!;
      assert.ok(a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.seq < b.seq), `order at ${i}`);
    }
    await store.close();
    assert.equal(parkedRows(path), 0, 'an unbounded window unparks everything');
  });

  it('keeps far-future tasks parked while the engine only looks a horizon ahead', async () => {
    const store = await openSqliteStore(path, {});
    await store.loadDue(START + 60_000, null, 10);
    const far = Array.from({ length: 100 }, (_, i) => task(`f${i}`, START + 3 * BUCKET_MS + i * 1_000));
    const near = Array.from({ length: 10 }, (_, i) => task(`n${i}`, START + 1_000 + i));
    await store.schedule([...far, ...near], START);
    assert.deepEqual(
      (await loadAll(store, START + 60_000)).map((r) => r.id),
      near.map((t) => t.id),
    );
    // A parked task can still be claimed once due (the engine may learn of it from loadDue).
    const [claimed] = await store.claim(['f0'], START + 3 * BUCKET_MS);
    assert.equal(claimed?.id, 'f0');
    assert.equal((await store.get('f0'))?.state, 'reserved');
    await store.close();
    assert.equal(parkedRows(path), 99);
  });
});
