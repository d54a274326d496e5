// Migrations: a database written at schema version 1 is brought up to date on open, its
// rows untouched; 0002 drops the redundant column CHECK on state and the table CHECK still
// refuses any state outside the five; 0003 files parked rows in runs and drops the index
// tasks_parked, and every parked task is still loaded when its time comes; 0005 adds the
// push subscriptions table to a version 4 file without touching its tasks; 0006 adds the
// tasks' nullable url column (their own push target).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { DEFAULT_BACKOFF } from '../../../src/core/task/backoff.js';
import { sql as v1 } from '../../../src/stores/sqlite/migrations/0001_initial.js';
import { STATE_CHECK, apply as dropStateCheck } from '../../../src/stores/sqlite/migrations/0002_state_check.js';
import { apply as buildParkedRuns, sql as parkedRuns } from '../../../src/stores/sqlite/migrations/0003_parked_runs.js';
import { sql as deadIndex } from '../../../src/stores/sqlite/migrations/0004_dead_index.js';
import { LATEST_VERSION, MIGRATIONS } from '../../../src/stores/sqlite/migrations/index.js';
import { openSqliteStore } from '../../../src/stores/sqlite/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { BUCKET_MS, bucketOf } from '../../../src/stores/sqlite/parking.js';
import { APPLICATION_ID } from '../../../src/stores/sqlite/schema.js';
import { decodeSeqs } from '../../../src/stores/sqlite/seq-runs.js';
import { pushSubscription } from '../../../src/testing/store-conformance/index.js';

const T0 = Date.UTC(2030, 0, 1);

function tableSql(db: Database.Database): string {
  return db.prepare<[], string>("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'tasks'").pluck().get() ?? '';
}

function insertRaw(db: Database.Database, id: string, state: string): void {
  db.prepare(
    `INSERT INTO tasks (id, topic, state, run_at, due_at, attempts, max_attempts, ttr_ms, backoff_base_ms, backoff_factor,
                        backoff_max_ms, backoff_jitter, created_at, updated_at, payload)
     VALUES (?, 't', ?, ?, ?, 0, 3, 5000, 1000, 2, 60000, 0.2, ?, ?, '{"v":1}')`,
  ).run(id, state, T0 + 1_000, T0 + 1_000, T0, T0);
}

/** A version 2 file (the index tasks_parked, no runs) holding n pending tasks, task i parked in bucketOfTask(i). */
function writeVersion2(path: string, n: number, bucketOfTask: (i: number) => number): void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`application_id = ${APPLICATION_ID}`);
  db.exec(v1);
  dropStateCheck(db);
  db.pragma('user_version = 2');
  const park = db.prepare(
    `INSERT INTO tasks (id, topic, state, run_at, due_at, park_bucket, attempts, max_attempts, ttr_ms, backoff_base_ms,
                        backoff_factor, backoff_max_ms, backoff_jitter, created_at, updated_at, payload)
     VALUES (?, 't', 'pending', ?, NULL, ?, 0, 3, 5000, 1000, 2, 60000, 0.2, ?, ?, '{}')`,
  );
  for (let i = 0; i < n; i++) park.run(`p${i}`, bucketOfTask(i) * BUCKET_MS + i, bucketOfTask(i), T0, T0);
  db.prepare("INSERT INTO task_counts (topic, state, n) VALUES ('t', 'pending', ?)").run(n);
  db.close();
}

/** A version 4 file (everything before push subscriptions) holding the given pending tasks. */
function writeVersion4(path: string, ids: readonly string[]): void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`application_id = ${APPLICATION_ID}`);
  db.exec(v1);
  dropStateCheck(db);
  db.exec(parkedRuns);
  buildParkedRuns(db);
  db.exec(deadIndex);
  db.pragma('user_version = 4');
  for (const id of ids) insertRaw(db, id, 'pending');
  db.prepare("INSERT INTO task_counts (topic, state, n) VALUES ('t', 'pending', ?)").run(ids.length);
  db.close();
}

function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare<[string], number>("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?").pluck().get(name) === 1;
}

describe('sqlite store: migrations', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-migrations-'));
    path = join(dir, 'm.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a fresh database has the latest schema, without the column CHECK on state', async () => {
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    await store.close();
    const db = new Database(path, { readonly: true });
    assert.equal(db.pragma('user_version', { simple: true }), LATEST_VERSION);
    assert.ok(!tableSql(db).includes(STATE_CHECK));
    assert.ok(tableSql(db).includes("state = 'pending' AND receipt IS NULL"), 'the table CHECK stays');
    assert.ok(hasTable(db, 'push_subscriptions'));
    db.close();
  });

  it('ends with 0014_task_priority, version 14', () => {
    assert.equal(LATEST_VERSION, 14);
    assert.deepEqual(MIGRATIONS.map((m) => [m.version, m.name]).at(-1), [14, '0014_task_priority']);
  });

  it('versions ascend', () => {
    for (let i = 1; i < MIGRATIONS.length; i++) assert.ok(MIGRATIONS[i]!.version > MIGRATIONS[i - 1]!.version);
  });

  it('upgrades a version 5 database: schedules work', async () => {
    writeVersion4(path, ['old-1']);
    const store4 = await openSqliteStore(path, { clock: storeSystemClock });
    await store4.close();
    const db = new Database(path);
    // Back to exactly version 5: without what 0006 to 0014 add.
    db.exec('DROP TABLE schedules; ALTER TABLE tasks DROP COLUMN url; ALTER TABLE tasks DROP COLUMN acked_receipt; ALTER TABLE tasks DROP COLUMN history; ALTER TABLE tasks DROP COLUMN trace; ALTER TABLE tasks DROP COLUMN priority');
    db.exec('DROP TRIGGER parked_days_update; DROP TRIGGER parked_days_delete; DROP TABLE parked_days');
    db.exec('DROP TABLE paused_topics; DROP TABLE topic_limits');
    db.pragma('user_version = 5');
    db.close();
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    assert.deepEqual(await store.schedules.listSchedules(), []);
    await store.close();
    const after = new Database(path, { readonly: true });
    assert.equal(after.pragma('user_version', { simple: true }), LATEST_VERSION);
    assert.ok(hasTable(after, 'schedules'));
    assert.ok(hasTable(after, 'paused_topics'));
    after.close();
  });

  it('upgrades a version 4 database: push subscriptions work, its tasks are untouched', async () => {
    writeVersion4(path, ['old-1', 'old-2']);
    const before = new Database(path, { readonly: true });
    assert.ok(!hasTable(before, 'push_subscriptions'), 'version 4 has none');
    before.close();

    const store = await openSqliteStore(path, { clock: storeSystemClock });
    assert.equal((await store.tasks.get('old-2'))?.payload, '{"v":1}');
    assert.equal((await store.tasks.stats()).byState.pending, 2);
    assert.deepEqual(await store.push.listPushSubscriptions(), []);
    await store.push.putPushSubscription(pushSubscription('t'));
    assert.deepEqual(await store.push.getPushSubscription('t'), pushSubscription('t'));
    // 0006: the old tasks have no url; a new one keeps its own.
    assert.equal((await store.tasks.get('old-1'))?.url, null);
    await store.tasks.schedule([{ id: 'own', topic: 't', payload: '{}', runAt: T0, maxAttempts: 1, ttrMs: 1_000, backoff: DEFAULT_BACKOFF, url: 'https://x.example.com/h' }], T0);
    assert.equal((await store.tasks.get('own'))?.url, 'https://x.example.com/h');
    // 0013: the old tasks have no trace context.
    assert.equal((await store.tasks.get('old-1'))?.trace, null);
    await store.close();

    const after = new Database(path, { readonly: true });
    assert.equal(after.pragma('user_version', { simple: true }), LATEST_VERSION);
    assert.ok(hasTable(after, 'push_subscriptions'));
    assert.deepEqual(after.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
    assert.equal(after.prepare('SELECT count(*) FROM tasks').pluck().get(), 3);
    after.close();
  });

  it('upgrades a version 1 database in place: rows kept, states still checked', async () => {
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma(`application_id = ${APPLICATION_ID}`);
    db.exec(v1);
    db.pragma('user_version = 1');
    assert.ok(tableSql(db).includes(STATE_CHECK), 'version 1 has it');
    insertRaw(db, 'old-1', 'pending');
    insertRaw(db, 'old-2', 'pending');
    db.prepare("INSERT INTO task_counts (topic, state, n) VALUES ('t', 'pending', 2)").run();
    db.close();

    const store = await openSqliteStore(path, { clock: storeSystemClock });
    assert.equal((await store.tasks.get('old-1'))?.payload, '{"v":1}');
    const [created] = await store.tasks.schedule(
      [{ id: 'new-1', topic: 't', payload: '{}', runAt: T0 + 5, maxAttempts: 3, ttrMs: 5_000, backoff: DEFAULT_BACKOFF }],
      T0,
    );
    assert.equal(created?.created, true);
    assert.equal((await store.tasks.stats()).byState.pending, 3);
    await store.close();

    const after = new Database(path);
    assert.equal(after.pragma('user_version', { simple: true }), LATEST_VERSION);
    assert.ok(!tableSql(after).includes(STATE_CHECK));
    assert.deepEqual(after.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
    assert.equal((after.prepare('SELECT count(*) AS n FROM tasks').get() as { n: number }).n, 3);
    // The table CHECK alone refuses a state outside the five, as the column CHECK did.
    assert.throws(() => insertRaw(after, 'bogus', 'bogus'), /CHECK constraint failed/);
    after.close();
    // And a second open has nothing left to do.
    const again = await openSqliteStore(path, { clock: storeSystemClock });
    assert.equal((await again.tasks.get('new-1'))?.state, 'pending');
    await again.close();
  });

  it('upgrades a version 2 database with parked rows: every one filed in a run, tasks_parked gone', async () => {
    // More than one run's worth in one bucket, a few in another, interleaved by seq.
    const bucket = bucketOf(T0) + 3;
    writeVersion2(path, 600, (i) => (i % 10 === 0 ? bucket + 1 : bucket));

    const store = await openSqliteStore(path, { clock: storeSystemClock });
    const seen: string[] = [];
    for (let after: { dueAt: number; seq: number } | null = null; ; ) {
      const page = await store.tasks.loadDue(Number.POSITIVE_INFINITY, after, 250);
      seen.push(...page.map((r) => r.id));
      if (page.length < 250) break;
      after = { dueAt: page.at(-1)!.dueAt, seq: page.at(-1)!.seq };
    }
    assert.equal(new Set(seen).size, 600);
    await store.close();

    const after = new Database(path, { readonly: true });
    assert.equal(after.pragma('user_version', { simple: true }), LATEST_VERSION);
    assert.equal(after.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'tasks_parked'").pluck().get(), 0);
    after.close();
  });

  it('counts the parked rows of an older file per hour (0009), and keeps counting as they are unparked', async () => {
    const HOUR = 3_600_000;
    const bucket = bucketOf(T0) + 3;
    // Task i at bucket start + i ms: all within the bucket's first hour, or (every 10th) the next bucket's.
    writeVersion2(path, 600, (i) => (i % 10 === 0 ? bucket + 1 : bucket));
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    const from = Math.floor((bucket * BUCKET_MS) / HOUR) * HOUR;
    const to = from + 48 * HOUR;
    const hourOf = (bucketIndex: number): number => Math.floor((bucketIndex * BUCKET_MS - from) / HOUR);
    const expected = new Array<number>(48).fill(0);
    expected[hourOf(bucket)] = 540;
    expected[hourOf(bucket + 1)] = 60;
    let got = await store.tasks.dueHistogram({ from, to, bucketMs: HOUR });
    assert.equal(got.coveredUntil, to);
    assert.deepEqual(got.counts, expected);
    assert.deepEqual((await store.tasks.dueHistogram({ from, to, bucketMs: HOUR, topic: 't' })).counts, expected);
    // Unparked into tasks_due (loadDue reaches them): counted from the index instead, once.
    await store.tasks.loadDue(Number.POSITIVE_INFINITY, null, 1);
    got = await store.tasks.dueHistogram({ from, to, bucketMs: HOUR });
    assert.deepEqual(got.counts, expected);
    await store.close();
    const db = new Database(path, { readonly: true });
    assert.equal(db.prepare('SELECT count(*) FROM parked_days').pluck().get(), 0, 'nothing parked is left counted');
    db.close();
  });

  it('builds runs that name each parked row of version 2 once, under its own bucket', async () => {
    const bucket = bucketOf(T0) + 3;
    writeVersion2(path, 600, (i) => bucket + (i % 3));
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    await store.close();

    const after = new Database(path, { readonly: true });
    const filed = (after.prepare('SELECT bucket, seqs FROM parked_runs').raw().all() as [number, Buffer][]).flatMap(([b, seqs]) =>
      decodeSeqs(seqs).map((seq) => `${b}:${seq}`),
    );
    const parked = (after.prepare('SELECT park_bucket, seq FROM tasks WHERE park_bucket IS NOT NULL').raw().all() as [number, number][]).map(
      ([b, seq]) => `${b}:${seq}`,
    );
    after.close();
    assert.equal(parked.length, 600);
    assert.deepEqual([...filed].sort(), [...parked].sort());
  });
});

describe('sqlite store: migration 0008 (acked_receipt)', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-migrations-'));
    path = join(dir, 'm.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('upgrades a version 4 database: a task acked afterwards answers its ack sent again with acked', async () => {
    writeVersion4(path, ['old-1']);
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    try {
      const [reserved] = await store.tasks.reserve(['old-1'], T0 + 2_000);
      assert.ok(reserved?.receipt);
      assert.equal((await store.tasks.ack('old-1', reserved.receipt, T0 + 2_001)).status, 'acked');
      assert.equal((await store.tasks.ack('old-1', reserved.receipt, T0 + 2_001)).status, 'already_acked');
      assert.equal((await store.tasks.ack('old-1', `${reserved.receipt}x`, T0 + 2_002)).status, 'stale');
    } finally {
      await store.close();
    }
  });
});

describe('sqlite store: migration 0011 (attempt history)', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-migrations-'));
    path = join(dir, 'm.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A file of the version before history (every migration up to 9), with a task that failed once and one completed. */
  function writeVersion9(): void {
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma(`application_id = ${APPLICATION_ID}`);
    for (const m of MIGRATIONS.filter((x) => x.version <= 9)) {
      if (m.sql !== undefined) db.exec(m.sql);
      m.apply?.(db);
    }
    db.pragma('user_version = 9');
    insertRaw(db, 'failed-once', 'pending');
    db.prepare("UPDATE tasks SET attempts = 1, last_error = 'boom' WHERE id = 'failed-once'").run();
    insertRaw(db, 'done', 'pending');
    db.prepare("UPDATE tasks SET state = 'completed', due_at = NULL, attempts = 1 WHERE id = 'done'").run();
    db.prepare("INSERT INTO task_counts (topic, state, n) VALUES ('t', 'pending', 1), ('t', 'completed', 1)").run();
    db.close();
  }

  it('upgrades a version 9 database: old tasks read with an empty history, and their next attempts are kept', async () => {
    writeVersion9();
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    try {
      const old = await store.tasks.get('failed-once');
      assert.deepEqual([old?.history, old?.lastError, old?.payload], [[], 'boom', '{"v":1}']);
      assert.deepEqual((await store.tasks.get('done'))?.history, []);
      const [second] = await store.tasks.reserve(['failed-once'], T0 + 2_000);
      await store.tasks.nack({ id: 'failed-once', receipt: second!.receipt!, now: T0 + 2_010, delayMs: 0, error: 'again', random: 0 });
      const [third] = await store.tasks.reserve(['failed-once'], T0 + 2_100);
      assert.equal((await store.tasks.ack('failed-once', third!.receipt!, T0 + 2_103)).status, 'acked');
      assert.deepEqual((await store.tasks.get('failed-once'))?.history, [
        { attempt: 2, startedAt: T0 + 2_000, durationMs: 10, outcome: 'nacked', error: 'again' },
        { attempt: 3, startedAt: T0 + 2_100, durationMs: 3, outcome: 'acked', error: null },
      ]);
    } finally {
      await store.close();
    }
    const db = new Database(path, { readonly: true });
    assert.equal(db.pragma('user_version', { simple: true }), LATEST_VERSION);
    db.close();
  });
});
