// The engine's background loops, each on the injected clock: the janitor's interval, the
// expirer's and the promoter's retries after a store failure.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { ExpireOutcome, Logger, RemoteTimerSource, SharedDispatch } from '../../src/core/ports/index.js';
import type { ReservedTask, TimerRef } from '../../src/core/task/model.js';
import type { EngineQueue } from '../../src/engine/engine-queue.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { MemoryTasks } from '../../src/stores/memory/memory-tasks.js';
import { MAX_NOTICE_TIMERS } from '../../src/engine/timers/notice-timers.js';
import { T0, flush, openManual } from '../helpers/engine.js';
import { openPushing } from '../helpers/push.js';
import { ManualPlanning } from '../helpers/manual-planning.js';

/** A logger that keeps the messages of its errors. */
function recordingLogger(): Logger & { errors: string[] } {
  const errors: string[] = [];
  const ignore = (): void => undefined;
  return { errors, debug: ignore, info: ignore, warn: ignore, error: (_obj, msg) => void errors.push(msg ?? '') };
}

/** A memory tasks role whose next `failures` calls of `purge` / `expire` reject, counting every call. */
class FlakyTasks extends MemoryTasks {
  failures = 0;
  purges: { before: number; limit: number }[] = [];
  expiries = 0;

  override async purge(before: number, limit: number): Promise<number> {
    this.purges.push({ before, limit });
    if (this.failures > 0 && this.failures--) throw new Error('disk on fire');
    return super.purge(before, limit);
  }

  override async expire(id: string, receipt: string, now: number): Promise<ExpireOutcome> {
    this.expiries++;
    if (this.failures > 0 && this.failures--) throw new Error('disk on fire');
    return super.expire(id, receipt, now);
  }
}

/**
 * A memory store that dispatches like a shared one (SharedDispatch): due tasks wait in its
 * own ready list until reserved. Its next `failures` promotions reject.
 */
class SharedMemoryStore extends MemoryStore implements SharedDispatch {
  override readonly coordination: SharedDispatch = this;
  readonly schedulePlanning = new ManualPlanning(1, 0);
  failures = 0;
  promotions = 0;
  private ready: TimerRef[] = [];
  remote: ((ref: TimerRef, source: RemoteTimerSource) => void) | null = null;
  /** The lanes reserveReady was asked for. */
  readonly asked = new Set<string>();

  async promote(refs: readonly TimerRef[]): Promise<void> {
    this.promotions++;
    if (this.failures > 0 && this.failures--) throw new Error('connection reset');
    this.ready.push(...refs);
  }

  async reserveReady(topic: string, max: number, now: () => number, ttrMs: number | undefined): Promise<ReservedTask[]> {
    this.asked.add(topic);
    const mine = this.ready.filter((ref) => ref.topic === topic).slice(0, max);
    this.ready = this.ready.filter((ref) => !mine.includes(ref));
    return this.tasks.reserveRefs(mine, now(), ttrMs);
  }

  onRemoteTimer(listener: (ref: TimerRef, source: RemoteTimerSource) => void): void {
    this.remote = listener;
  }
}

/** The same without timer homes, as the shared stores (Redis, PostgreSQL): every timer is kept by id. */
class SharedStoreWithoutHomes extends SharedMemoryStore {
}

const newTask = (id: string, runAt: number, topic = 't'): Parameters<MemoryTasks['schedule']>[0][number] => ({
  id, topic, payload: '1', runAt, maxAttempts: 1, ttrMs: 1_000, backoff: { baseMs: 1, factor: 1, maxMs: 1, jitter: 0 },
});

describe('engine loops', () => {
  let q: EngineQueue | undefined;
  afterEach(async () => {
    await q?.close();
    q = undefined;
  });

  it('the janitor purges finished tasks past retention every purgeIntervalMs, at most purgeBatch a time', async () => {
    const store = new MemoryStore((assertOpen) => new FlakyTasks(assertOpen));
    const opened = await openManual({ store, retentionMs: 1_000, purgeIntervalMs: 5_000, purgeBatch: 7 });
    q = opened.q;
    await q.schedule({ topic: 't', id: 'done' });
    const [delivery] = await q.reserve('t');
    await q.ack('done', delivery!.receipt);
    opened.clock.advance(4_999);
    await flush();
    assert.deepEqual(store.tasks.purges, [], 'no purge before the interval');
    opened.clock.advance(1);
    await flush();
    assert.deepEqual(store.tasks.purges, [{ before: T0 + 5_000 - 1_000, limit: 7 }]);
    assert.equal(await q.get('done'), null, 'completed more than retentionMs ago: purged');
    opened.clock.advance(5_000);
    await flush();
    assert.equal(store.tasks.purges.length, 2, 'and again one interval later');
  });

  it('the janitor keeps its interval after a purge fails', async () => {
    const store = new MemoryStore((assertOpen) => new FlakyTasks(assertOpen));
    const logger = recordingLogger();
    const opened = await openManual({ store, logger, purgeIntervalMs: 1_000 });
    q = opened.q;
    store.tasks.failures = 1;
    opened.clock.advance(1_000);
    await flush();
    assert.deepEqual(logger.errors, ['purging finished tasks failed']);
    opened.clock.advance(999);
    await flush();
    assert.equal(store.tasks.purges.length, 1);
    opened.clock.advance(1);
    await flush();
    assert.equal(store.tasks.purges.length, 2);
  });

  it('an expiry the store fails is retried after storeRetryMs, and the task is delivered again', async () => {
    const store = new MemoryStore((assertOpen) => new FlakyTasks(assertOpen));
    const logger = recordingLogger();
    const opened = await openManual({ store, logger, storeRetryMs: 300 });
    q = opened.q;
    await q.schedule({ topic: 't', id: 'x', ttrMs: 1_000 });
    assert.equal((await q.reserve('t'))[0]?.attempt, 1);
    store.tasks.failures = 1;
    opened.clock.advance(1_000);
    await flush();
    assert.equal(store.tasks.expiries, 1);
    assert.deepEqual(logger.errors, ['expiring a reservation failed; will retry']);
    assert.equal((await q.get('x'))?.state, 'reserved');
    opened.clock.advance(299);
    await flush();
    assert.equal(store.tasks.expiries, 1, 'not before storeRetryMs');
    opened.clock.advance(1);
    await flush();
    assert.equal(store.tasks.expiries, 2);
    const [again] = await q.reserve('t');
    assert.equal(again?.id, 'x');
    assert.equal(again?.attempt, 2);
  });

  it('close() drops a pending expiry retry: no timer outlives the queue', async () => {
    const store = new MemoryStore((assertOpen) => new FlakyTasks(assertOpen));
    const opened = await openManual({ store, storeRetryMs: 60_000, purgeIntervalMs: 3_600_000 });
    q = opened.q;
    await q.schedule({ topic: 't', id: 'x', ttrMs: 1_000 });
    await q.reserve('t');
    store.tasks.failures = 1;
    opened.clock.advance(1_000);
    await flush();
    assert.equal(store.tasks.expiries, 1);
    await q.close();
    q = undefined;
    assert.equal(opened.clock.pendingTimers, 0);
  });

  it('a shared store: a promotion that fails is retried after storeRetryMs, and then the task is delivered', async () => {
    const store = new SharedMemoryStore();
    const logger = recordingLogger();
    const opened = await openManual({ store, logger, storeRetryMs: 250 });
    q = opened.q;
    await q.schedule({ topic: 't', id: 'x', delayMs: 100 });
    store.failures = 1;
    opened.clock.advance(100);
    await flush();
    assert.equal(store.promotions, 1);
    assert.deepEqual(logger.errors, ['making due tasks ready failed; will retry']);
    assert.deepEqual(await q.reserve('t'), []);
    opened.clock.advance(249);
    await flush();
    assert.equal(store.promotions, 1, 'not before storeRetryMs');
    opened.clock.advance(1);
    await flush();
    assert.equal(store.promotions, 2);
    assert.equal((await q.reserve('t'))[0]?.id, 'x');
    assert.deepEqual((await q.stats()).ready, {}, 'nothing waits in the process: the ready lists are the store\'s');
  });

  it('a shared store: timers it hands over are kept and promoted when due', async () => {
    const store = new SharedMemoryStore();
    const opened = await openManual({ store });
    q = opened.q;
    // Another process scheduled it: this one learns of its timer from the store alone.
    const [outcome] = await store.tasks.schedule([{ id: 'r', topic: 't', payload: '1', runAt: T0 + 50, maxAttempts: 1, ttrMs: 1_000, backoff: { baseMs: 1, factor: 1, maxMs: 1, jitter: 0 } }], T0);
    store.remote!(outcome!.ref!, 'store');
    assert.equal((await q.stats()).timers, 1);
    opened.clock.advance(50);
    await flush();
    assert.equal(store.promotions, 1);
    assert.deepEqual((await q.reserve('t')).map((d) => d.payload), [1]);
  });

  // Issue 45: any role that can log in to the database may NOTIFY, any Redis client may
  // PUBLISH. A timer a notice tells of may make the engine look again, nothing more.
  describe('timers told by another process\'s message (notice)', () => {
    it('never take the place of the task\'s own timer: a forged later time holds nothing back, a forged earlier one delivers nothing early', async () => {
      const store = new SharedStoreWithoutHomes();
      const opened = await openManual({ store });
      q = opened.q;
      const [outcome] = await store.tasks.schedule([newTask('r', T0 + 50)], T0);
      const ref = outcome!.ref!;
      store.remote!(ref, 'store');
      store.remote!({ ...ref, dueAt: T0 + 5_000 }, 'notice');
      store.remote!({ ...ref, dueAt: T0 + 10 }, 'notice');
      opened.clock.advance(10);
      await flush();
      assert.deepEqual(await q.reserve('t', { waitMs: 0 }), [], 'the earlier notice fires, and the store delivers nothing before runAt');
      opened.clock.advance(40);
      await flush();
      assert.deepEqual((await q.reserve('t', { waitMs: 0 })).map((d) => d.id), ['r'], 'delivered at its runAt, the later notice notwithstanding');
    });

    it('a notice of a task with no timer here places one, which a loaded timer then replaces', async () => {
      const store = new SharedStoreWithoutHomes();
      const opened = await openManual({ store });
      q = opened.q;
      const [outcome] = await store.tasks.schedule([newTask('n', T0 + 30)], T0);
      store.remote!(outcome!.ref!, 'notice');
      assert.equal((await q.stats()).timers, 1);
      opened.clock.advance(30);
      await flush();
      assert.deepEqual((await q.reserve('t', { waitMs: 0 })).map((d) => d.id), ['n']);
    });

    it('a time that is not a whole number of ms is dropped, and nothing throws', async () => {
      const store = new SharedStoreWithoutHomes();
      const opened = await openManual({ store });
      q = opened.q;
      const ref: TimerRef = { id: 'a1', topic: 'x', kind: 'run', dueAt: Number.NEGATIVE_INFINITY, seq: 1, receipt: null };
      for (const dueAt of [Number.NEGATIVE_INFINITY, Number.NaN, Number.POSITIVE_INFINITY, 1.5, 2 ** 60])
        for (const source of ['notice', 'store'] as const) assert.doesNotThrow(() => store.remote!({ ...ref, dueAt }, source), `${dueAt} (${source})`);
      assert.equal((await q.stats()).timers, 0);
      await q.schedule({ id: 'after', topic: 'x' });
      assert.deepEqual((await q.reserve('x', { waitMs: 0 })).map((d) => d.id), ['after'], 'the queue works on');
    });

    it('at most MAX_NOTICE_TIMERS wait at once: a flood of made-up ids fills no memory', async () => {
      const store = new SharedStoreWithoutHomes();
      const opened = await openManual({ store });
      q = opened.q;
      for (let i = 0; i < MAX_NOTICE_TIMERS + 500; i++) store.remote!({ id: `forged-${i}`, topic: 't', kind: 'run', dueAt: T0 + 1_000, seq: i, receipt: null }, 'notice');
      assert.equal((await q.stats()).timers, MAX_NOTICE_TIMERS);
      opened.clock.advance(1_000);
      await flush();
      assert.equal((await q.stats()).timers, 0);
      store.remote!({ id: 'forged-x', topic: 't', kind: 'run', dueAt: T0 + 2_000, seq: 1, receipt: null }, 'notice');
      assert.equal((await q.stats()).timers, 1, 'room again once they fired');
    });

    it('a made-up push lane starts no push consumer; a real one does, once the task is read', async () => {
      const store = new SharedStoreWithoutHomes();
      const opened = await openPushing({ store });
      q = opened.q;
      store.remote!({ id: 'nobody', topic: '~push:made-up', kind: 'run', dueAt: T0 + 10, seq: 1, receipt: null }, 'notice');
      const [real] = await store.tasks.schedule([{ ...newTask('own-url', T0 + 10, 'real'), url: 'https://hooks.example.com/x' }], T0);
      assert.equal(real!.ref!.topic, '~push:real');
      store.remote!(real!.ref!, 'notice');
      await flush();
      opened.clock.advance(10);
      await flush();
      assert.equal(store.asked.has('~push:made-up'), false, 'no consumer of a lane no task has');
      assert.equal(store.asked.has('~push:real'), true, 'the real lane has its consumer');
    });
  });
});
