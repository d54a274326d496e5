// The SQLite store in a bad environment: each case must end in a DelayQError with a
// stable code and leave every byte of existing data as it was.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { isDelayQError, type ErrorCode } from '../../../src/core/errors.js';
import { DEFAULT_BACKOFF } from '../../../src/core/task/backoff.js';
import type { NewTaskRecord } from '../../../src/core/task/model.js';
import type { TaskStore } from '../../../src/core/ports/index.js';
import { openSqliteStore } from '../../../src/stores/sqlite/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { LATEST_VERSION } from '../../../src/stores/sqlite/migrations/index.js';
import { APPLICATION_ID } from '../../../src/stores/sqlite/schema.js';

const T0 = Date.UTC(2030, 0, 1);
const fixture = join(import.meta.dirname, 'fixtures', 'hold.ts');

function task(id: string, overrides: Partial<NewTaskRecord> = {}): NewTaskRecord {
  return { id, topic: 't', payload: '{}', runAt: T0 + 1_000, maxAttempts: 3, ttrMs: 5_000, backoff: DEFAULT_BACKOFF, ...overrides };
}

function digest(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

async function rejectsWith(promise: Promise<TaskStore>, code: ErrorCode, message: RegExp): Promise<void> {
  // A store that opened after all is closed before the test fails: left open, it would keep
  // the file's process alive until the runner's file timeout.
  const closed = promise.then(async (store) => {
    await store.close();
    return store;
  });
  await assert.rejects(closed, (error: unknown) => {
    assert.ok(isDelayQError(error, code), `expected ${code}, got ${String(error)}`);
    assert.match(error.message, message);
    return true;
  });
}

describe('sqlite store: opening', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-env-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates a new file in WAL mode, stamped with the delayq id and schema version', async () => {
    const path = join(dir, 'new.db');
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    await store.tasks.schedule([task('a')], T0);
    await store.close();
    const db = new Database(path, { readonly: true });
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(db.pragma('application_id', { simple: true }), APPLICATION_ID);
    assert.equal(db.pragma('user_version', { simple: true }), LATEST_VERSION);
    db.close();
  });

  it('keeps every committed task across close and reopen, and reports its horizon', async () => {
    const path = join(dir, 'reopen.db');
    const first = await openSqliteStore(path, { clock: storeSystemClock, horizonMs: 5_000 });
    assert.equal(first.horizonMs, 5_000);
    await first.tasks.schedule([task('a'), task('b', { topic: 'u' })], T0);
    await first.close();
    const second = await openSqliteStore(path, { clock: storeSystemClock });
    assert.equal(second.horizonMs, 60_000);
    assert.equal((await second.tasks.get('b'))?.topic, 'u');
    assert.deepEqual((await second.tasks.stats()).byState.pending, 2);
    await second.close();
  });

  it('refuses a directory that does not exist', async () => {
    await rejectsWith(openSqliteStore(join(dir, 'missing', 'x.db'), { clock: storeSystemClock }), 'STORE_UNAVAILABLE', /does not exist/);
    assert.equal(existsSync(join(dir, 'missing')), false);
  });

  // We run as root, so a chmod'ed directory would not stop us. Two places no process can
  // create a file in, root included: "inside" a regular file, and /proc (a kernel fs).
  it('refuses a path inside a regular file', async () => {
    const file = join(dir, 'plain');
    writeFileSync(file, 'data');
    await rejectsWith(openSqliteStore(join(file, 'x.db'), { clock: storeSystemClock }), 'STORE_UNAVAILABLE', /not a directory/);
    assert.equal(readFileSync(file, 'utf8'), 'data');
  });

  it('refuses a directory where no file can be created (/proc)', async () => {
    await rejectsWith(openSqliteStore('/proc/delayq-test.db', { clock: storeSystemClock }), 'STORE_UNAVAILABLE', /cannot open or create the file/);
  });

  it('refuses a file that is not SQLite, without changing it', async () => {
    const path = join(dir, 'notes.txt');
    writeFileSync(path, 'just some text, certainly more than one hundred bytes long '.repeat(4));
    const before = digest(path);
    await rejectsWith(openSqliteStore(path, { clock: storeSystemClock }), 'STORE_INCOMPATIBLE', /not a delayq database/);
    assert.equal(digest(path), before);
  });

  it("refuses another application's SQLite database, without changing it", async () => {
    const path = join(dir, 'other.db');
    const other = new Database(path);
    other.exec("CREATE TABLE customers (name TEXT); INSERT INTO customers VALUES ('ada')");
    other.close();
    const before = digest(path);
    await rejectsWith(openSqliteStore(path, { clock: storeSystemClock }), 'STORE_INCOMPATIBLE', /not a delayq database/);
    assert.equal(digest(path), before);
    assert.equal(existsSync(`${path}-wal`), false);
  });

  it('refuses a database written by a newer schema version, without changing it', async () => {
    const path = join(dir, 'newer.db');
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    await store.tasks.schedule([task('a')], T0);
    await store.close();
    const db = new Database(path);
    db.pragma(`user_version = ${LATEST_VERSION + 1}`);
    db.close();
    const before = digest(path);
    await rejectsWith(openSqliteStore(path, { clock: storeSystemClock }), 'STORE_INCOMPATIBLE', /newer delayq/);
    assert.equal(digest(path), before);
  });

  it('refuses bad options', async () => {
    await rejectsWith(openSqliteStore(join(dir, 'x.db'), { clock: storeSystemClock, horizonMs: 10 }), 'INVALID_OPTION', /horizonMs/);
    await rejectsWith(openSqliteStore(join(dir, 'x.db'), { clock: storeSystemClock, synchronous: 'OFF' as 'FULL' }), 'INVALID_OPTION', /synchronous/);
  });
});

describe('sqlite store: one process at a time', () => {
  const dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-lock-'));
  const children: ChildProcess[] = [];
  after(() => {
    for (const child of children) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  // --expose-gc: the holder collects garbage before it says "ready" (see the fixture).
  function holdInChild(path: string): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', fixture, path], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    return new Promise((resolve, reject) => {
      let said = '';
      child.stdout.on('data', (chunk: Buffer) => {
        said += chunk.toString();
        if (said.includes('ready\n')) resolve(child);
      });
      child.once('exit', (code, signal) => reject(new Error(`holder exited early (${String(code ?? signal)})`)));
    });
  }

  it('refuses a file held by another live process, then opens it once that process died', async () => {
    const path = join(dir, 'held.db');
    const holder = await holdInChild(path);
    await rejectsWith(openSqliteStore(path, { clock: storeSystemClock }), 'STORE_LOCKED', /another delayq process/);
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    holder.kill('SIGKILL');
    await exited;
    // The kernel dropped the dead holder's lock; its committed task is intact.
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    try {
      const held = await store.tasks.get('held');
      assert.equal(held?.payload, '"mine"');
      assert.equal(held?.state, 'pending');
    } finally {
      await store.close();
    }
  });

  it('refuses a second open in the same process', async () => {
    const path = join(dir, 'twice.db');
    const first = await openSqliteStore(path, { clock: storeSystemClock });
    try {
      await rejectsWith(openSqliteStore(path, { clock: storeSystemClock }), 'STORE_LOCKED', /only one may open it/);
      await first.tasks.schedule([task('a')], T0);
      assert.equal((await first.tasks.get('a'))?.state, 'pending');
    } finally {
      await first.close();
    }
  });
});
