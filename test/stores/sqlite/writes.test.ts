// Group commit and failed writes: concurrent calls share a transaction, each call is
// all-or-nothing, and a call that rejects has left nothing behind.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { isDelayQError } from '../../../src/core/errors.js';
import { ManualClock } from '../../../src/core/manual-clock.js';
import { DEFAULT_BACKOFF } from '../../../src/core/task/backoff.js';
import type { NewTaskRecord } from '../../../src/core/task/model.js';
import { DelayQueue } from '../../../src/open-queue.js';
import { INTERVAL_MS } from '../../../src/stores/sqlite/checkpointer.js';
import { GroupCommit } from '../../../src/stores/sqlite/group-commit.js';
import { openSqliteStore } from '../../../src/stores/sqlite/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import type { SqliteStore } from '../../../src/stores/sqlite/sqlite-store.js';

const T0 = Date.UTC(2030, 0, 1);

function task(id: string, overrides: Partial<NewTaskRecord> = {}): NewTaskRecord {
  return { id, topic: 't', payload: '{}', runAt: T0 + 1_000, maxAttempts: 3, ttrMs: 5_000, backoff: DEFAULT_BACKOFF, ...overrides };
}

describe('sqlite store: group commit through the store', () => {
  let dir: string;
  let store: SqliteStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-writes-'));
    store = (await openSqliteStore(join(dir, 'w.db'), { clock: storeSystemClock })) as SqliteStore;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a batch with a constraint failure rejects whole; the calls sharing its transaction commit', async () => {
    const [bad, good, alsoGood] = await Promise.allSettled([
      // maxAttempts 0 breaks a CHECK on the second row, after the first row was inserted.
      store.tasks.schedule([task('first'), task('broken', { maxAttempts: 0 })], T0),
      store.tasks.schedule([task('other')], T0),
      store.tasks.cancel('nope', T0),
    ]);
    assert.equal(bad.status, 'rejected');
    assert.ok(bad.status === 'rejected' && isDelayQError(bad.reason, 'STORE_UNAVAILABLE'));
    assert.equal(good.status, 'fulfilled');
    assert.deepEqual(alsoGood.status === 'fulfilled' && alsoGood.value, { status: 'not_found' });
    assert.equal(await store.tasks.get('first'), null, 'nothing of the failed batch is stored');
    assert.equal(await store.tasks.get('broken'), null);
    assert.equal((await store.tasks.get('other'))?.state, 'pending');
    assert.equal((await store.tasks.stats()).byState.pending, 1, 'the counters only saw the committed write');
    assert.deepEqual(await store.tasks.loadDue(Infinity, null, 10).then((refs) => refs.map((r) => r.id)), ['other']);
  });

  it('ackMany with the topic known (the worker path) acks, counts and judges receipts like ack', async () => {
    await store.tasks.schedule([task('a'), task('b'), task('c')], T0);
    const claimed = await store.tasks.reserve(['a', 'b', 'c'], T0 + 1_000);
    assert.deepEqual(
      claimed.map((c) => [c.id, c.topic, c.payload, c.runAt, c.attempts, c.maxAttempts, c.reservedUntil]),
      ['a', 'b', 'c'].map((id) => [id, 't', '{}', T0 + 1_000, 1, 3, T0 + 6_000]),
    );
    const [a, b] = claimed;
    const outcomes = await store.tasks.ackMany(
      [
        { id: 'a', receipt: a!.receipt!, topic: 't' },
        { id: 'b', receipt: 'not-the-receipt', topic: 't' },
        { id: 'missing', receipt: b!.receipt!, topic: 't' },
        { id: 'b', receipt: b!.receipt! },
      ],
      T0 + 1_500,
    );
    assert.deepEqual(outcomes, [{ status: 'acked', topic: 't' }, { status: 'stale' }, { status: 'not_found' }, { status: 'acked', topic: 't' }]);
    assert.equal((await store.tasks.get('a'))?.state, 'completed');
    assert.equal((await store.tasks.get('c'))?.state, 'reserved');
    const stats = await store.tasks.stats();
    assert.deepEqual([stats.byState.completed, stats.byState.reserved, stats.byState.pending], [2, 1, 0]);
  });

  it('a single-statement write that fails (no savepoint) leaves nothing; its neighbours commit', async () => {
    const [before, bad, after] = await Promise.allSettled([
      store.tasks.schedule([task('before')], T0),
      store.tasks.schedule([task('lone', { ttrMs: 0 })], T0),
      store.tasks.schedule([task('after')], T0),
    ]);
    assert.equal(before.status, 'fulfilled');
    assert.ok(bad.status === 'rejected' && isDelayQError(bad.reason, 'STORE_UNAVAILABLE'));
    assert.equal(after.status, 'fulfilled');
    assert.equal(await store.tasks.get('lone'), null);
    assert.deepEqual((await store.tasks.list({ limit: 10 })).map((r) => r.id), ['after', 'before']);
    assert.equal((await store.tasks.stats()).byState.pending, 2);
  });

  it('settles writes queued before close instead of dropping them, and rejects later ones', async () => {
    const pending = store.tasks.schedule([task('late')], T0);
    await store.close();
    assert.equal((await pending)[0]?.created, true);
    await assert.rejects(store.tasks.schedule([task('after')], T0), (e: unknown) => isDelayQError(e, 'QUEUE_CLOSED'));
    store = (await openSqliteStore(join(dir, 'w.db'), { clock: storeSystemClock })) as SqliteStore;
    assert.equal((await store.tasks.get('late'))?.state, 'pending');
  });
});

function count(db: Database.Database): number {
  return (db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n;
}

describe('sqlite store: the group-commit writer', () => {
  let dir: string;
  let db: Database.Database;
  // The writer's clock: a flush runs only when the test advances it, so "before the
  // flush" and "after it" are steps of the test, not races with the event loop.
  let clock: ManualClock;
  /** Runs the flush that `pending` waits for, then awaits it. */
  const flushed = <T>(pending: Promise<T>): Promise<T> => {
    clock.advance(0);
    return pending;
  };
  beforeEach(() => {
    clock = new ManualClock();
    dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-gc-'));
    db = new Database(join(dir, 'gc.db'));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL CHECK (v >= 0))');
  });
  afterEach(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

  it('commits 1,000 concurrent single writes in one transaction, each resolved after it', async () => {
    const writer = new GroupCommit(db, clock, () => undefined, asError);
    const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
    const writes = Array.from({ length: 1_000 }, (_, i) => writer.submit(1, () => insert.run(`k${i}`, i).changes));
    assert.equal(count(db), 0, 'nothing is written before the flush');
    const results = await flushed(Promise.all(writes));
    assert.equal(results.length, 1_000);
    assert.equal(writer.committed, 1);
    assert.equal(count(db), 1_000);
  });

  it('splits a flood into transactions of bounded weight', async () => {
    const writer = new GroupCommit(db, clock, () => undefined, asError, 100);
    const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
    await flushed(Promise.all(Array.from({ length: 10 }, (_, i) => writer.submit(50, () => insert.run(`k${i}`, i)))));
    assert.equal(writer.committed, 5);
  });

  it('when the transaction itself fails, every write in it rejects and none is on disk', async () => {
    const writer = new GroupCommit(
      db,
      clock,
      () => {
        throw new Error('disk full (simulated at commit time)');
      },
      asError,
    );
    const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
    const results = await flushed(Promise.allSettled([writer.submit(1, () => insert.run('a', 1)), writer.submit(1, () => insert.run('b', 2))]));
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    assert.equal(count(db), 0);
    assert.equal(db.inTransaction, false);
  });

  it('applyNow: applies at once and resolves before the commit, which the next flush makes with the queued writes', async () => {
    const writer = new GroupCommit(db, clock, () => undefined, asError);
    const other = new Database(join(dir, 'gc.db'), { readonly: true });
    try {
      const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
      const early = await writer.applyNow(1, () => insert.run('claim', 1).changes);
      assert.equal(early, 1);
      assert.equal(count(db), 1, 'visible on the connection at once');
      assert.equal(count(other), 0, 'not committed yet');
      // Submitted after the early change resolved: must never commit without it.
      const later = writer.submit(1, () => insert.run('ack', 2).changes);
      assert.equal(writer.committed, 0);
      await flushed(later);
      assert.equal(writer.committed, 1, 'one transaction for both');
      assert.equal(count(other), 2);
    } finally {
      other.close();
    }
  });

  it('applyNow: a change that fails rejects and leaves nothing; the early changes before it stay', async () => {
    const writer = new GroupCommit(db, clock, () => undefined, asError);
    const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
    await writer.applyNow(1, () => insert.run('a', 1));
    await assert.rejects(
      writer.applyNow(1, () => {
        insert.run('b', 2);
        return insert.run('c', -1); // breaks the CHECK after b was written
      }),
    );
    await flushed(writer.submit(1, () => insert.run('d', 4)));
    assert.deepEqual(
      db.prepare('SELECT k FROM t ORDER BY k').pluck().all(),
      ['a', 'd'],
    );
    assert.equal(db.inTransaction, false);
  });

  it('applyNow: when the transaction fails, the early change is lost with it and the writes queued after it reject', async () => {
    let failCommit = false;
    const writer = new GroupCommit(
      db,
      clock,
      () => {
        if (failCommit) throw new Error('disk full (simulated at commit time)');
      },
      asError,
    );
    const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
    await writer.applyNow(1, () => insert.run('claim', 1));
    failCommit = true;
    await assert.rejects(flushed(writer.submit(1, () => insert.run('ack', 2))), /disk full/);
    assert.equal(count(db), 0, 'neither is on disk: the dependent write never commits without the early one');
    assert.equal(db.inTransaction, false);
    failCommit = false;
    await writer.applyNow(1, () => insert.run('again', 3));
    await flushed(writer.submit(1, () => insert.run('next', 4)));
    assert.equal(count(db), 2, 'the writer goes on after a failed transaction');
  });

  it('applyNow: waits for the commit like submit() while the checkpointer holds writes', async () => {
    let may = false;
    const writer = new GroupCommit(db, clock, () => undefined, asError, 4_000, () => may);
    const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
    let resolved = false;
    const claim = writer.applyNow(1, () => insert.run('held', 1)).then(() => (resolved = true));
    clock.advance(0);
    clock.advance(1);
    await Promise.resolve();
    assert.equal(resolved, false, 'held, like any write');
    assert.equal(writer.committed, 0);
    may = true;
    clock.advance(1); // the hold's 2 ms are up: it asks again, and may write
    await claim;
    assert.equal(writer.committed, 1);
  });

  it('drain() commits an early change even with nothing queued', async () => {
    const writer = new GroupCommit(db, clock, () => undefined, asError);
    const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
    await writer.applyNow(1, () => insert.run('a', 1));
    writer.drain();
    assert.equal(db.inTransaction, false);
    assert.equal(writer.committed, 1);
  });

  it('rejects writes on a closed connection', async () => {
    const writer = new GroupCommit(db, clock, () => undefined, asError);
    db.close();
    await assert.rejects(flushed(writer.submit(1, () => 1)), /not open/);
  });
});

describe('sqlite store: acks through the public API', () => {
  it('a topic in the acks a caller passes never reaches the store: the counters stay the task’s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-acks-'));
    const q = await DelayQueue.open({ store: `sqlite:${join(dir, 'a.db')}` });
    try {
      await q.schedule({ topic: 'orders', id: 'o1' });
      const [delivery] = await q.reserve('orders', { max: 1, waitMs: 5_000 });
      assert.ok(delivery);
      assert.deepEqual(await q.ackMany([{ ...delivery, topic: 'someone-else' }]), ['acked']);
      const { topics } = await q.stats();
      assert.deepEqual(topics['orders'], { completed: 1 });
      assert.equal(topics['someone-else'], undefined);
    } finally {
      await q.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sqlite store: its clock', () => {
  it('runs commits and checkpoint passes on the clock it is given: idle, it holds no timer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-clock-'));
    const clock = new ManualClock(T0);
    const store = await openSqliteStore(join(dir, 'c.db'), { clock });
    try {
      assert.equal(clock.pendingTimers, 0, 'an idle store arms nothing');
      const scheduled = store.tasks.schedule([task('a')], T0);
      assert.equal(clock.pendingTimers, 1, 'the flush of this turn');
      clock.advance(0);
      assert.equal((await scheduled)[0]?.created, true);
      assert.equal(clock.pendingTimers, 1, 'the checkpoint pass that copies the commit');
      const second = store.tasks.schedule([task('b')], T0);
      clock.advance(0);
      await second;
      assert.equal(clock.pendingTimers, 1, 'one pass for every commit within its interval');
      clock.advance(INTERVAL_MS - 1);
      assert.equal(clock.pendingTimers, 1);
      clock.advance(1);
      assert.equal(clock.pendingTimers, 0, 'the pass was asked for; nothing else is armed');
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
