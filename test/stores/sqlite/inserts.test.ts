// The batched insert path (inserts.ts): multi-row INSERTs in chunks, seq assigned in batch
// order, idempotency by id across and within chunks, counters, and a failing chunk that
// takes its whole call (and only it) back. Also: parking does not chase new rows forever.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { isDelayQError } from '../../../src/core/errors.js';
import { DEFAULT_BACKOFF } from '../../../src/core/task/backoff.js';
import type { NewTaskRecord, TimerRef } from '../../../src/core/task/model.js';
import { openSqliteStore } from '../../../src/stores/sqlite/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { MAX_ROWS } from '../../../src/stores/sqlite/inserts.js';
import { BUCKET_MS, bucketOf } from '../../../src/stores/sqlite/parking.js';
import type { SqliteStore } from '../../../src/stores/sqlite/sqlite-store.js';

const B = bucketOf(Date.UTC(2030, 0, 1)) + 1;
const T0 = B * BUCKET_MS;

function task(id: string, overrides: Partial<NewTaskRecord> = {}): NewTaskRecord {
  return { id, topic: 't', payload: `{"id":"${id}"}`, runAt: T0 + 1_000, maxAttempts: 3, ttrMs: 5_000, backoff: DEFAULT_BACKOFF, ...overrides };
}

async function loadAll(store: SqliteStore, until: number): Promise<TimerRef[]> {
  const out: TimerRef[] = [];
  let after: { dueAt: number; seq: number } | null = null;
  for (;;) {
    const page = await store.tasks.loadDue(until, after, 500);
    out.push(...page);
    if (page.length < 500) return out;
    const last = page[page.length - 1]!;
    after = { dueAt: last.dueAt, seq: last.seq };
  }
}

describe('sqlite store: batched inserts', () => {
  let dir: string;
  let path: string;
  let store: SqliteStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-inserts-'));
    path = join(dir, 'i.db');
    store = (await openSqliteStore(path, { clock: storeSystemClock })) as SqliteStore;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('inserts a batch of many chunks in batch order, every row whole', async () => {
    const n = 3 * MAX_ROWS + 37; // full chunks, then 32, 4 and 1
    const tasks = Array.from({ length: n }, (_, i) =>
      task(`k${i}`, { topic: i % 3 === 0 ? 'a' : 'b', runAt: T0 + 1_000 + (i % 7), maxAttempts: 1 + (i % 5), ttrMs: 1_000 + i, backoff: { baseMs: i + 1, factor: 1.5, maxMs: 10_000 + i, jitter: 0.1 } }),
    );
    const outcomes = await store.tasks.schedule(tasks, T0);
    assert.equal(outcomes.length, n);
    outcomes.forEach((o, i) => {
      assert.equal(o.id, `k${i}`);
      assert.equal(o.created, true);
      assert.equal(o.runAt, tasks[i]!.runAt);
      assert.equal(o.ref?.seq, outcomes[0]!.ref!.seq + i, 'seq follows batch order');
    });
    // Equal due times come back in insertion (batch) order.
    const loaded = await loadAll(store, Number.POSITIVE_INFINITY);
    assert.deepEqual(
      loaded.map((r) => r.id),
      [...tasks].map((t, i) => ({ t, i })).sort((x, y) => x.t.runAt - y.t.runAt || x.i - y.i).map(({ t }) => t.id),
    );
    for (const i of [0, MAX_ROWS - 1, MAX_ROWS, n - 2, n - 1]) {
      const record = await store.tasks.get(`k${i}`);
      const t = tasks[i]!;
      assert.deepEqual(
        record && { topic: record.topic, payload: record.payload, runAt: record.runAt, state: record.state, attempts: record.attempts, maxAttempts: record.maxAttempts, ttrMs: record.ttrMs, backoff: record.backoff, createdAt: record.createdAt },
        { topic: t.topic, payload: t.payload, runAt: t.runAt, state: 'pending', attempts: 0, maxAttempts: t.maxAttempts, ttrMs: t.ttrMs, backoff: t.backoff, createdAt: T0 },
      );
    }
    const stats = await store.tasks.stats();
    assert.equal(stats.byState.pending, n);
    assert.equal(stats.byTopic['a']?.pending, Math.ceil(n / 3));
    assert.equal(stats.byTopic['b']?.pending, n - Math.ceil(n / 3));
  });

  it('mixes new and existing ids across chunks: existing ones are reported with their runAt and left untouched', async () => {
    const existing = [5, MAX_ROWS + 1, 2 * MAX_ROWS + 10].map((i) => task(`m${i}`, { runAt: T0 + 50, payload: '"old"', topic: 'old' }));
    await store.tasks.schedule(existing, T0 - 10);
    const batch = Array.from({ length: 2 * MAX_ROWS + 20 }, (_, i) => task(`m${i}`, { runAt: T0 + 2_000 + i }));
    const outcomes = await store.tasks.schedule(batch, T0);
    const old = new Set(existing.map((t) => t.id));
    outcomes.forEach((o, i) => {
      assert.equal(o.id, `m${i}`);
      assert.equal(o.created, !old.has(o.id), o.id);
      assert.equal(o.runAt, old.has(o.id) ? T0 + 50 : T0 + 2_000 + i);
      assert.equal(o.ref === null, old.has(o.id));
    });
    const kept = await store.tasks.get(`m${MAX_ROWS + 1}`);
    assert.deepEqual(kept && [kept.payload, kept.topic, kept.runAt, kept.createdAt], ['"old"', 'old', T0 + 50, T0 - 10]);
    // The refs of created rows are their real seqs: each one is a task in the table at that position.
    const loaded = new Map((await loadAll(store, Number.POSITIVE_INFINITY)).map((r) => [r.id, r.seq]));
    for (const o of outcomes) if (o.ref) assert.equal(loaded.get(o.id), o.ref.seq, o.id);
    const stats = await store.tasks.stats();
    assert.equal(stats.byState.pending, batch.length);
    assert.equal(stats.byTopic['t']?.pending, batch.length - existing.length);
    assert.equal(stats.byTopic['old']?.pending, existing.length);
  });

  it('keeps the first of an id repeated within a batch, in the same chunk or a later one', async () => {
    const batch = Array.from({ length: MAX_ROWS + 8 }, (_, i) => task(`r${i}`, { runAt: T0 + 1_000 + i }));
    batch[3] = task('r0', { runAt: T0 + 9 }); // same chunk as the first r0
    batch[MAX_ROWS + 2] = task('r1', { runAt: T0 + 9 }); // a later chunk
    batch[MAX_ROWS + 3] = task('twice', { runAt: T0 + 7, payload: '"first"' });
    batch[MAX_ROWS + 5] = task('twice', { runAt: T0 + 8, payload: '"second"' });
    const outcomes = await store.tasks.schedule(batch, T0);
    assert.deepEqual(outcomes[3], { id: 'r0', runAt: T0 + 1_000, created: false, ref: null });
    assert.deepEqual(outcomes[MAX_ROWS + 2], { id: 'r1', runAt: T0 + 1_001, created: false, ref: null });
    assert.equal(outcomes[MAX_ROWS + 3]?.created, true);
    assert.deepEqual(outcomes[MAX_ROWS + 5], { id: 'twice', runAt: T0 + 7, created: false, ref: null });
    assert.equal((await store.tasks.get('twice'))?.payload, '"first"');
    assert.equal((await store.tasks.stats()).byState.pending, batch.length - 3);
    assert.equal((await loadAll(store, Number.POSITIVE_INFINITY)).length, batch.length - 3);
  });

  it('a batch with nothing new creates nothing and reports every existing runAt', async () => {
    const batch = Array.from({ length: MAX_ROWS + 3 }, (_, i) => task(`d${i}`, { runAt: T0 + i }));
    await store.tasks.schedule(batch, T0);
    const again = await store.tasks.schedule(batch.map((t) => ({ ...t, runAt: t.runAt + 99 })), T0 + 1);
    assert.ok(again.every((o, i) => !o.created && o.ref === null && o.runAt === T0 + i));
    assert.equal((await store.tasks.stats()).byState.pending, batch.length);
  });

  it('a row failing in a later chunk takes its whole call back, and only it', async () => {
    const batch = Array.from({ length: 2 * MAX_ROWS + 5 }, (_, i) => task(`f${i}`));
    batch[MAX_ROWS + 3] = task('bad', { ttrMs: 0 }); // breaks a CHECK after a full chunk went in
    const [bad, good] = await Promise.allSettled([store.tasks.schedule(batch, T0), store.tasks.schedule([task('g0'), task('g1')], T0)]);
    assert.ok(bad.status === 'rejected' && isDelayQError(bad.reason, 'STORE_UNAVAILABLE'));
    assert.equal(good.status, 'fulfilled');
    assert.equal(await store.tasks.get('f0'), null);
    assert.equal(await store.tasks.get(`f${MAX_ROWS + 4}`), null);
    assert.equal((await store.tasks.stats()).byState.pending, 2);
    assert.deepEqual((await loadAll(store, Number.POSITIVE_INFINITY)).map((r) => r.id), ['g0', 'g1']);
    // Alone in its transaction, the same batch rolls back whole too.
    await assert.rejects(store.tasks.schedule(batch, T0), (e: unknown) => isDelayQError(e, 'STORE_UNAVAILABLE'));
    assert.equal((await store.tasks.stats()).byState.pending, 2);
    // And the seqs it would have used are free again: the next batch follows g1.
    const [next] = await store.tasks.schedule([task('n0'), task('n1')], T0);
    const loaded = await loadAll(store, Number.POSITIVE_INFINITY);
    assert.equal(loaded.find((r) => r.id === 'g1')!.seq + 1, next?.ref?.seq);
  });

  it('parking advances its frontier while new rows keep arriving in the bucket being unparked', async () => {
    // Parked in bucket B + 1 before the first loadDue (every new task parks until then).
    await store.tasks.schedule(Array.from({ length: 20 }, (_, i) => task(`p${i}`, { runAt: T0 + BUCKET_MS + i })), T0);
    await store.tasks.loadDue(T0 + 60_000, null, 10); // frontier B + 1; unparking B + 1 runs in the background
    const reader = new Database(path, { readonly: true });
    const parkBucket = reader.prepare<[string], number | null>('SELECT park_bucket FROM tasks WHERE id = ?').pluck();
    const stillParked: string[] = [];
    for (let i = 0; i < 10; i++) {
      await store.tasks.schedule([task(`q${i}a`, { runAt: T0 + BUCKET_MS + i }), task(`q${i}b`, { runAt: T0 + 3 * BUCKET_MS })], T0);
      // Once the first background step has drained bucket B + 1, its new rows skip parking
      // (before, each step left the frontier behind and the next insert parked its row again).
      if (i > 0 && parkBucket.get(`q${i}a`) !== null) stillParked.push(`q${i}a`);
    }
    reader.close();
    assert.deepEqual(stillParked, []);
    const parked = new Database(path, { readonly: true });
    const byBucket = parked.prepare('SELECT park_bucket AS b, count(*) AS n FROM tasks WHERE park_bucket IS NOT NULL GROUP BY park_bucket').all();
    parked.close();
    assert.deepEqual(byBucket, [{ b: B + 3, n: 10 }], 'bucket B + 1 is all in the due index; B + 3 stays parked');
    assert.equal((await loadAll(store, T0 + 2 * BUCKET_MS)).length, 30);
  });
});
