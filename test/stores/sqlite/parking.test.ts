// Parking: far-future tasks are filed by bucket, not in the due index, and moved there
// before their time comes; loadDue sees every pending task either way, in order.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { TaskStore } from '../../../src/core/ports/index.js';
import { DEFAULT_BACKOFF } from '../../../src/core/task/backoff.js';
import type { NewTaskRecord, TimerRef } from '../../../src/core/task/model.js';
import { openSqliteStore } from '../../../src/stores/sqlite/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { BUCKET_MS, SCAN_RUNS, UNPARK_BATCH, bucketOf } from '../../../src/stores/sqlite/parking.js';
import { decodeSeqs } from '../../../src/stores/sqlite/seq-runs.js';

const B = bucketOf(Date.UTC(2030, 0, 1)) + 1;
const START = B * BUCKET_MS;

function task(id: string, runAt: number): NewTaskRecord {
  return { id, topic: 't', payload: '{}', runAt, maxAttempts: 3, ttrMs: 5_000, backoff: DEFAULT_BACKOFF };
}

async function loadAll(store: TaskStore, until: number): Promise<TimerRef[]> {
  const out: TimerRef[] = [];
  let after: { dueAt: number; seq: number } | null = null;
  for (;;) {
    const page = await store.tasks.loadDue(until, after, 200);
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

/** Parked rows that no run of their bucket names: each of them would never be unparked. */
function unfiled(path: string): number {
  const db = new Database(path, { readonly: true });
  const filed = new Set<string>();
  for (const [bucket, seqs] of db.prepare('SELECT bucket, seqs FROM parked_runs').raw().all() as [number, Buffer][])
    for (const seq of decodeSeqs(seqs)) filed.add(`${bucket}:${seq}`);
  const parked = db.prepare('SELECT park_bucket, seq FROM tasks WHERE park_bucket IS NOT NULL').raw().all() as [number, number][];
  db.close();
  return parked.filter(([bucket, seq]) => !filed.has(`${bucket}:${seq}`)).length;
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
    let store = await openSqliteStore(path, { clock: storeSystemClock });
    // Before the first loadDue every new task parks: more than one unpark batch in bucket B,
    // a few in later buckets, inserted out of time order.
    const inB = Array.from({ length: UNPARK_BATCH * 2 + 37 }, (_, i) => task(`b${i}`, START + ((i * 7_919) % 1_000_000)));
    const later = [task('b1-x', START + BUCKET_MS + 5), task('b5-x', START + 5 * BUCKET_MS + 1), task('b1-y', START + BUCKET_MS + 5)];
    await store.tasks.schedule([...later, ...inB], START - 1_000);
    await store.close();
    assert.equal(parkedRows(path), inB.length + later.length);

    store = await openSqliteStore(path, { clock: storeSystemClock });
    const firstWindow = await loadAll(store, START + BUCKET_MS);
    assert.deepEqual(
      firstWindow.map((r) => r.id),
      [...inB].sort((x, y) => x.runAt - y.runAt || Number(x.id.slice(1)) - Number(y.id.slice(1))).map((t) => t.id),
    );
    // Now inside the frontier: a new task in bucket B goes straight to the due index...
    await store.tasks.schedule([task('b-new', START + 10)], START);
    // ...and one far away parks.
    await store.tasks.schedule([task('b9-x', START + 9 * BUCKET_MS)], START);
    assert.equal((await store.tasks.cancel('b5-x', START)).status, 'cancelled');
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
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    await store.tasks.loadDue(START + 60_000, null, 10);
    const far = Array.from({ length: 100 }, (_, i) => task(`f${i}`, START + 3 * BUCKET_MS + i * 1_000));
    const near = Array.from({ length: 10 }, (_, i) => task(`n${i}`, START + 1_000 + i));
    await store.tasks.schedule([...far, ...near], START);
    assert.deepEqual(
      (await loadAll(store, START + 60_000)).map((r) => r.id),
      near.map((t) => t.id),
    );
    // A parked task can still be reserved once due (the engine may learn of it from loadDue).
    const [claimed] = await store.tasks.reserve(['f0'], START + 3 * BUCKET_MS);
    assert.equal(claimed?.id, 'f0');
    assert.equal((await store.tasks.get('f0'))?.state, 'reserved');
    await store.close();
    assert.equal(parkedRows(path), 99);
  });

  it('files every parked row in a run of its bucket, from batches and single schedules alike, duplicates included', async () => {
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    const batch = Array.from({ length: 300 }, (_, i) => task(`m${i}`, START + (i % 7) * BUCKET_MS + i));
    await store.tasks.schedule(batch, START - 1_000);
    await Promise.all(Array.from({ length: 40 }, (_, i) => store.tasks.schedule([task(`s${i}`, START + (i % 3) * BUCKET_MS + 7)], START - 1_000)));
    // An id that exists parks nothing; the next row parks in a bucket of its own.
    const [again] = await store.tasks.schedule([task('s0', START + 5 * BUCKET_MS)], START - 1_000);
    assert.equal(again?.created, false);
    await store.tasks.schedule([task('next', START + 9 * BUCKET_MS)], START - 1_000);
    await store.close();
    assert.equal(parkedRows(path), 341);
    assert.equal(unfiled(path), 0);

    const reopened = await openSqliteStore(path, { clock: storeSystemClock });
    const loaded = await loadAll(reopened, START + 7 * BUCKET_MS);
    assert.equal(loaded.length, 340, 'all but "next", which is due later');
    assert.ok(!loaded.some((r) => r.id === 'next'));
    assert.deepEqual((await loadAll(reopened, Number.POSITIVE_INFINITY)).at(-1)?.id, 'next');
    await reopened.close();
  });

  it('meets every run, however many it keeps, and a run written while a pass is under way', async () => {
    let store = await openSqliteStore(path, { clock: storeSystemClock });
    // More runs to keep than one step reads (single schedules, one run each, far away),
    // then the runs the pass must move.
    for (let i = 0; i < SCAN_RUNS + 300; i += 100)
      await Promise.all(Array.from({ length: 100 }, (_, j) => store.tasks.schedule([task(`far${i + j}`, START + 5 * BUCKET_MS + i + j)], START - 1_000)));
    await Promise.all(Array.from({ length: 50 }, (_, j) => store.tasks.schedule([task(`near${j}`, START + 1_000 + j)], START - 1_000)));
    await store.close();

    store = await openSqliteStore(path, { clock: storeSystemClock });
    // The frontier is still 0, so these park too; the first lands in the transaction of the
    // pass's first step, the second after it.
    const loading = loadAll(store, START + 60_000);
    const late1 = store.tasks.schedule([task('late-1', START + 2_000)], START);
    await new Promise((resolve) => setImmediate(resolve));
    const late2 = store.tasks.schedule([task('late-2', START + 3_000)], START);
    await Promise.all([late1, late2]);
    await loading;
    const due = (await loadAll(store, START + 60_000)).map((r) => r.id);
    assert.equal(due.length, 52);
    assert.ok(due.includes('late-1') && due.includes('late-2') && due.includes('near49'));
    await store.close();
    assert.equal(parkedRows(path), SCAN_RUNS + 300);
    assert.equal(unfiled(path), 0);
  });

  it('a task parked after a pass lowers the floor, so the next frontier move unparks it', async () => {
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    await store.tasks.schedule([task('far', START + 6 * BUCKET_MS)], START);
    // This pass leaves "far" (bucket B+6) parked and learns that nothing lower is.
    assert.equal((await loadAll(store, START + 60_000)).length, 0);
    await new Promise((resolve) => setImmediate(resolve)); // the background pass to B+2: one step, run by the next flush
    // Parks in B+3, below what the floor said: the move to B+4 must still find it.
    await store.tasks.schedule([task('nearer', START + 3 * BUCKET_MS + 1)], START);
    assert.deepEqual(
      (await loadAll(store, START + 3 * BUCKET_MS + 60_000)).map((r) => r.id),
      ['nearer'],
    );
    await store.close();
  });

  it('keeps the frontier across a restart: the first loadDue after an open needs no pass', async () => {
    let store = await openSqliteStore(path, { clock: storeSystemClock });
    await store.tasks.schedule([task('far', START + 5 * BUCKET_MS)], START);
    await loadAll(store, START + 60_000);
    await new Promise((resolve) => setImmediate(resolve)); // the background pass to B+2: one step, run by the next flush
    await store.close();

    store = await openSqliteStore(path, { clock: storeSystemClock });
    // Below the stored frontier: straight to the due index, before any loadDue of this open.
    await store.tasks.schedule([task('near', START + BUCKET_MS + 1), task('farther', START + 6 * BUCKET_MS)], START);
    await store.close();
    const db = new Database(path, { readonly: true });
    const parked = db.prepare('SELECT id FROM tasks WHERE park_bucket IS NOT NULL ORDER BY id').pluck().all();
    assert.equal(db.prepare('SELECT frontier FROM parking_state').pluck().get(), B + 2);
    db.close();
    assert.deepEqual(parked, ['far', 'farther']);

    store = await openSqliteStore(path, { clock: storeSystemClock });
    assert.deepEqual(
      (await loadAll(store, Number.POSITIVE_INFINITY)).map((r) => r.id),
      ['near', 'far', 'farther'],
    );
    await store.close();
    // An unbounded load unparks everything but is not stored: parking resumes after a restart.
    const after = new Database(path, { readonly: true });
    assert.equal(after.prepare('SELECT frontier FROM parking_state').pluck().get(), B + 2);
    after.close();
  });

  it('files the single schedules of one transaction in one run per bucket', async () => {
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.tasks.schedule([task(`c${i}`, START + (i % 2) * BUCKET_MS + i)], START - 1_000)));
    await store.close();
    const db = new Database(path, { readonly: true });
    assert.deepEqual(db.prepare('SELECT bucket FROM parked_runs ORDER BY bucket').pluck().all(), [B, B + 1]);
    db.close();
    assert.equal(unfiled(path), 0);
  });

  it('moves a task parked earlier in the transaction whose pass step ends below it straight to the due index', async () => {
    let store = await openSqliteStore(path, { clock: storeSystemClock });
    await store.tasks.schedule([task('old', START + 1_000)], START - 1_000);
    await store.close();
    store = await openSqliteStore(path, { clock: storeSystemClock });
    // Same turn, same transaction: the schedule parks (frontier 0), then the pass's only step
    // reads parked_runs (without the new run, not yet filed) and moves the frontier past it.
    const scheduled = store.tasks.schedule([task('same-turn', START + 2_000)], START);
    const loaded = store.tasks.loadDue(START + 60_000, null, 100);
    await scheduled;
    assert.deepEqual(
      (await loaded).map((r) => r.id),
      ['old', 'same-turn'],
    );
    await store.close();
    assert.equal(parkedRows(path), 0);
  });

  it('takes another bucket width only while nothing is parked, and keeps it in the file', async () => {
    let store = await openSqliteStore(path, { clock: storeSystemClock, parkBucketMs: 1_000 });
    await store.tasks.schedule([task('soon', START + 5_500)], START);
    await store.close();
    const db = new Database(path, { readonly: true });
    assert.deepEqual(db.prepare('SELECT park_bucket FROM tasks').pluck().all(), [bucketOf(START + 5_500, 1_000)]);
    db.close();
    // A task is parked under 1,000 ms buckets: another width is refused, and the file let go.
    await assert.rejects(openSqliteStore(path, { clock: storeSystemClock, parkBucketMs: 2_000 }), (error: unknown) => {
      assert.equal((error as { code?: string }).code, 'INVALID_OPTION');
      return true;
    });
    // Without the option the file keeps its own width: loading 6 s ahead unparks the task.
    store = await openSqliteStore(path, { clock: storeSystemClock });
    assert.deepEqual((await loadAll(store, START + 6_000)).map((r) => r.id), ['soon']);
    await store.close();
  });
});
