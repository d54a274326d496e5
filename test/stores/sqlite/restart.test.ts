// The SQLite store under the engine: only the horizon lives in memory, and a restart
// delivers what was overdue in runAt order, in bounded batches, without resurrecting
// finished tasks. The engine's time is a ManualClock; the store keeps the system clock
// (storeOptions.clock), so its commits run on real turns of the event loop, as in production.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { ManualClock } from '../../../src/core/manual-clock.js';
import { DEFAULT_BACKOFF } from '../../../src/core/task/backoff.js';
import type { NewTaskRecord } from '../../../src/core/task/model.js';
import { DelayQueue } from '../../../src/open-queue.js';
import { openSqliteStore } from '../../../src/stores/sqlite/index.js';
import { silentLogger } from '../../../src/core/logger.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { pushSubscription } from '../../../src/testing/store-conformance/index.js';

const T0 = Date.UTC(2030, 0, 1);

function task(id: string, runAt: number, overrides: Partial<NewTaskRecord> = {}): NewTaskRecord {
  return { id, topic: 'jobs', payload: JSON.stringify({ id }), runAt, maxAttempts: 3, ttrMs: 30_000, backoff: DEFAULT_BACKOFF, ...overrides };
}

/** Lets I/O and promise chains run, one event-loop turn at a time, until `done()` or the cap. */
async function until(done: () => boolean, maxTurns = 200_000): Promise<void> {
  for (let turn = 0; turn < maxTurns && !done(); turn++) await new Promise<void>((resolve) => setImmediate(resolve));
  assert.ok(done(), 'condition not reached');
}

/** A deterministic shuffle, so insertion order (seq) differs from runAt order. */
function shuffled<T>(items: T[], seed = 42): T[] {
  let state = seed;
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('sqlite store under the engine', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-engine-'));
    path = join(dir, 'q.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps only the horizon in the wheel and loads the rest as time moves on', async () => {
    const clock = new ManualClock(T0);
    const q = await DelayQueue.open({ store: `sqlite:${path}`, storeOptions: { horizonMs: 60_000, clock: storeSystemClock }, clock });
    const far = Array.from({ length: 2_000 }, (_, i) => ({ id: `far${i}`, topic: 'jobs', runAt: T0 + 300_000 + i * 300, payload: i }));
    const near = Array.from({ length: 10 }, (_, i) => ({ id: `near${i}`, topic: 'jobs', runAt: T0 + 10_000 + i, payload: i }));
    await q.scheduleMany(far);
    await q.scheduleMany(near);
    assert.equal((await q.stats()).timers, 10, 'far-future tasks stay on disk');

    const early: string[] = [];
    let delivered = 0;
    let maxTimers = 0;
    const worker = q.work('jobs', (d) => {
      if (clock.now() < d.runAt) early.push(d.id);
      delivered++;
    });
    for (let t = 0; t < 2_400 && delivered < 2_010; t++) {
      clock.advance(500);
      for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
      maxTimers = Math.max(maxTimers, (await q.stats()).timers);
    }
    await until(() => delivered === 2_010);
    assert.deepEqual(early, [], 'no task delivered before its runAt');
    // At most one horizon's worth (60 s of tasks 300 ms apart = 200; a pass reads up to a
    // horizon ahead) and reservations in flight; never the 2,000 of the whole schedule.
    assert.ok(maxTimers > 0 && maxTimers <= 2 * 200 + 10, `timers peaked at ${maxTimers}`);
    await worker.close();
    await q.close();
  });

  it('on restart, delivers overdue tasks in runAt order in bounded batches; finished stay finished', async () => {
    const N = 20_000;
    const setup = await openSqliteStore(path, { clock: storeSystemClock });
    // Overdue by up to an hour, inserted in an order unrelated to runAt.
    const overdue = shuffled(Array.from({ length: N }, (_, i) => task(`o${i}`, T0 - 3_600_000 + i * 100)));
    for (let i = 0; i < N; i += 1_000) await setup.tasks.schedule(overdue.slice(i, i + 1_000), T0 - 3_700_000);
    await setup.tasks.schedule(
      [
        task('expired', T0 - 600_000, { ttrMs: 1_000 }),
        task('held', T0 - 600_000, { ttrMs: 3_600_000 }),
        task('dead', T0 - 600_000, { maxAttempts: 1 }),
        task('acked', T0 - 600_000),
        task('future', T0 + 7_200_000),
      ],
      T0 - 3_700_000,
    );
    const claimed = await setup.tasks.reserve(['expired', 'held', 'dead', 'acked'], T0 - 600_000);
    const receipt = (id: string): string => claimed.find((r) => r.id === id)!.receipt!;
    assert.equal((await setup.tasks.nack({ id: 'dead', receipt: receipt('dead'), now: T0 - 599_000, random: 0 })).status, 'dead');
    assert.equal((await setup.tasks.ack('acked', receipt('acked'), T0 - 599_000)).status, 'acked');
    await setup.close();

    const clock = new ManualClock(T0);
    const loader = { pageSize: 500, maxReadyBacklog: 1_000 };
    const q = await DelayQueue.open({ store: `sqlite:${path}`, storeOptions: { clock: storeSystemClock }, clock, loader });
    const order: { id: string; runAt: number; attempt: number }[] = [];
    let maxBacklog = 0;
    const worker = q.work(
      'jobs',
      async (d) => {
        order.push({ id: d.id, runAt: d.runAt, attempt: d.attempt });
        if (order.length % 250 === 0) maxBacklog = Math.max(maxBacklog, (await q.stats()).ready['jobs'] ?? 0);
      },
      { concurrency: 50 },
    );
    await until(() => order.length >= N + 1);
    // A few more turns: anything wrongly due would show up now.
    for (let i = 0; i < 200; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    await worker.close();

    const ids = order.map((o) => o.id);
    assert.equal(ids.length, N + 1);
    assert.equal(new Set(ids).size, N + 1, 'each delivered once');
    const expired = order.find((o) => o.id === 'expired');
    assert.equal(expired?.attempt, 2, 'the expired reservation is delivered again');
    for (const id of ['held', 'dead', 'acked', 'future']) assert.ok(!ids.includes(id), `${id} must not be delivered`);
    const runs = order.filter((o) => o.id !== 'expired');
    for (let i = 1; i < runs.length; i++) assert.ok(runs[i - 1]!.runAt <= runs[i]!.runAt, `out of runAt order at ${i}`);
    assert.ok(maxBacklog > 0, 'the backlog was sampled while it was non-empty');
    assert.ok(maxBacklog <= loader.maxReadyBacklog + loader.pageSize, `ready backlog peaked at ${maxBacklog}`);
    const stats = await q.stats();
    assert.equal(stats.counts.completed, N + 2);
    assert.equal(stats.counts.dead, 1);
    assert.equal(stats.counts.reserved, 1);
    assert.equal(stats.counts.pending, 1);
    await q.close();
  });
});

describe('sqlite store: push subscriptions on disk', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-push-'));
    path = join(dir, 'q.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a put is committed when it resolves, and what was put, replaced and deleted survives a reopen', async () => {
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    await store.push.putPushSubscription(pushSubscription('orders'));
    // Another connection sees the row: the put resolved after its COMMIT, not before.
    const other = new Database(path, { readonly: true });
    const rows = other.prepare<[], { topic: string; updated_at: number }>('SELECT topic, updated_at FROM push_subscriptions').all();
    other.close();
    assert.deepEqual(rows, [{ topic: 'orders', updated_at: T0 }]);

    const replaced = pushSubscription('orders', { url: 'https://other.example.com/h', updatedAt: T0 + 5 });
    await store.push.putPushSubscription(replaced);
    await store.push.putPushSubscription(pushSubscription('a.b:c-d_e'));
    await store.push.putPushSubscription(pushSubscription('gone'));
    assert.equal(await store.push.deletePushSubscription('gone'), true);
    // Not awaited: close() commits the writes it has accepted.
    const late = store.push.putPushSubscription(pushSubscription('late'));
    await store.close();
    await late;

    const reopened = await openSqliteStore(path, { clock: storeSystemClock });
    assert.deepEqual(await reopened.push.getPushSubscription('orders'), replaced);
    assert.equal(await reopened.push.getPushSubscription('gone'), null);
    assert.deepEqual((await reopened.push.listPushSubscriptions()).map((s) => s.topic), ['a.b:c-d_e', 'late', 'orders']);
    await reopened.close();
  });

  it('skips an unreadable row with a warning instead of failing every read', async () => {
    const setup = await openSqliteStore(path, { clock: storeSystemClock });
    await setup.push.putPushSubscription(pushSubscription('good'));
    await setup.close();
    const raw = new Database(path);
    // Valid JSON (the table's CHECK), but not a subscription.
    raw.prepare(`INSERT INTO push_subscriptions (topic, subscription, updated_at) VALUES ('bad', '{"url":5}', 0)`).run();
    assert.throws(() => raw.prepare("INSERT INTO push_subscriptions (topic, subscription, updated_at) VALUES ('worse', 'not json', 0)").run(), /CHECK constraint failed/);
    raw.close();

    const warnings: object[] = [];
    const logger = { ...silentLogger, warn: (obj: object) => void warnings.push(obj) };
    const store = await openSqliteStore(path, { clock: storeSystemClock, logger });
    assert.deepEqual((await store.push.listPushSubscriptions()).map((s) => s.topic), ['good']);
    assert.equal(await store.push.getPushSubscription('bad'), null);
    assert.equal(warnings.length, 2);
    assert.deepEqual(warnings.map((w) => (w as { topic?: string }).topic), ['bad', 'bad']);
    // Setting it again repairs it.
    await store.push.putPushSubscription(pushSubscription('bad'));
    assert.deepEqual((await store.push.listPushSubscriptions()).map((s) => s.topic), ['bad', 'good']);
    await store.close();
  });
});
