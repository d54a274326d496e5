/**
 * Rows the engine cannot read (core/task/undecodable.ts), on a manual clock: the engine reads
 * each reserved record on its own, quarantines one it cannot read (TaskStore.quarantine) and
 * delivers the others; a store without quarantine gets that task's attempts failed until it
 * is dead. The stores' own rows, spoilt with their drivers, are test/stores/undecodable-rows.test.ts.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { ReservedTask, TaskRecord, TimerRef } from '../../src/core/task/model.js';
import { decodeDelivery, decodeTaskInfo, undecodableInfo, UNDECODABLE_ROW } from '../../src/core/task/undecodable.js';
import type { EngineQueue } from '../../src/engine/engine-queue.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { MemoryTasks } from '../../src/stores/memory/memory-tasks.js';
import { flush, openManual, T0 } from '../helpers/engine.js';

/** A memory tasks role whose reservations of `spoilt` come back with a payload that is not JSON. */
class SpoilingTasks extends MemoryTasks {
  constructor(
    assertOpen: () => void,
    private readonly spoilt: string,
  ) {
    super(assertOpen);
  }

  override async reserveRefs(refs: readonly TimerRef[], now: number, ttrMs?: number): Promise<ReservedTask[]> {
    return (await super.reserveRefs(refs, now, ttrMs)).map((r) => (r.id === this.spoilt ? { ...r, payload: 'not json{' } : r));
  }

  override async get(id: string): Promise<TaskRecord | null> {
    const record = await super.get(id);
    return record !== null && id === this.spoilt && record.state !== 'dead' ? { ...record, payload: 'not json{' } : record;
  }
}

/** The same without quarantine: a store written outside this repository. */
function withoutQuarantine(store: MemoryStore): MemoryStore {
  const bound = (target: object, key: PropertyKey): unknown => {
    const value: unknown = Reflect.get(target, key, target);
    return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
  };
  const tasks = new Proxy(store.tasks, { get: (target, key) => (key === 'quarantine' ? undefined : bound(target, key)) });
  return new Proxy(store, { get: (target, key) => (key === 'tasks' ? tasks : bound(target, key)) });
}

describe('records the engine cannot read', () => {
  let q: EngineQueue | undefined;
  afterEach(async () => {
    await q?.close();
    q = undefined;
  });

  it('a reserve delivers the others, with their attempt and receipt; the spoilt one is dead with UNDECODABLE_ROW', async () => {
    const store = new MemoryStore((assertOpen) => new SpoilingTasks(assertOpen, 'bad'));
    const opened = await openManual({ store });
    q = opened.q;
    for (const id of ['a', 'bad', 'b']) await q.schedule({ id, topic: 't', payload: id });
    const got = await q.reserve('t', { max: 10 });
    assert.deepEqual(got.map((d) => [d.id, d.attempt]), [['a', 1], ['b', 1]]);
    for (const d of got) await q.ack(d.id, d.receipt);
    await flush();
    const bad = await store.tasks.get('bad');
    assert.equal(bad?.state, 'dead');
    assert.equal(bad.lastError, `${UNDECODABLE_ROW}: its payload is not JSON`);
    assert.deepEqual({ ...(await q.stats()).counts }, { pending: 0, reserved: 0, completed: 2, dead: 1, cancelled: 0 });
  });

  it('get shows a pending task it cannot read as dead, and the store moves it', async () => {
    const store = new MemoryStore((assertOpen) => new SpoilingTasks(assertOpen, 'bad'));
    const opened = await openManual({ store });
    q = opened.q;
    await q.schedule({ id: 'bad', topic: 't', payload: 1, delayMs: 60_000 });
    const shown = await q.get('bad');
    assert.deepEqual([shown?.state, shown?.payload, shown?.lastError], ['dead', null, `${UNDECODABLE_ROW}: its payload is not JSON`]);
    assert.equal((await q.stats()).counts.dead, 1);
    opened.clock.advance(60_000);
    await flush();
    assert.deepEqual(await q.reserve('t', { max: 10 }), [], 'out of delivery');
  });

  it('a store without quarantine: the spoilt task\'s attempts fail until it is dead; the others are delivered', async () => {
    const store = new MemoryStore((assertOpen) => new SpoilingTasks(assertOpen, 'bad'));
    const opened = await openManual({ store: withoutQuarantine(store) });
    q = opened.q;
    await q.schedule({ id: 'bad', topic: 't', payload: 1, maxAttempts: 3 });
    await q.schedule({ id: 'good', topic: 't', payload: 2 });
    const delivered: string[] = [];
    for (let i = 0; i < 5; i++) {
      for (const d of await q.reserve('t', { max: 10 })) delivered.push(d.id);
      await flush();
      opened.clock.advance(10);
      await flush();
    }
    assert.deepEqual(delivered, ['good']);
    const bad = await store.tasks.get('bad');
    assert.equal(bad?.state, 'dead');
    assert.equal(bad.lastError, `${UNDECODABLE_ROW}: its payload is not JSON`);
    assert.equal(bad.attempts, 3);
  });
});

describe('decodeDelivery, decodeTaskInfo', () => {
  const reserved: ReservedTask = { id: 'a', topic: 't', payload: '{"x":1}', runAt: T0, attempts: 1, maxAttempts: 3, receipt: '1.n', reservedUntil: T0 + 10 };
  it('reads a good record, and says why of each bad one', () => {
    assert.deepEqual(decodeDelivery(reserved).value?.payload, { x: 1 });
    const cases: [Partial<ReservedTask>, string][] = [
      [{ payload: 'not json{' }, 'its payload is not JSON'],
      [{ id: 'a b' }, 'its id is not a name (A-Z a-z 0-9 . _ : -)'],
      [{ topic: '' }, 'its topic is not a name (A-Z a-z 0-9 . _ : -)'],
      [{ runAt: Number.NaN }, 'its runAt is not a whole number'],
      [{ attempts: -1 }, 'its attempts is not a whole number'],
      [{ reservedUntil: null }, 'its reservedUntil is not a whole number'],
      [{ receipt: null }, 'it has no receipt'],
    ];
    for (const [change, problem] of cases) assert.equal(decodeDelivery({ ...reserved, ...change }).problem, problem, JSON.stringify(change));
    const record = { ...reserved, state: 'pending', ttrMs: 1_000, backoff: { baseMs: 1, factor: 1, maxMs: 1, jitter: 0 }, createdAt: T0, updatedAt: T0, receipt: null, reservedUntil: null, lastError: null, url: null, history: [] } as TaskRecord;
    assert.equal(decodeTaskInfo(record).problem, null);
    assert.equal(decodeTaskInfo({ ...record, state: 'zzz' as never }).problem, "its state is not one of delayq's");
    const shown = undecodableInfo({ ...record, payload: 'x', runAt: Number.NaN }, 'its payload is not JSON', T0 + 5);
    assert.deepEqual([shown.state, shown.payload, shown.runAt, shown.updatedAt, shown.lastError], ['dead', null, 0, T0 + 5, 'UNDECODABLE_ROW: its payload is not JSON']);
    assert.equal(undecodableInfo({ ...record, state: 'completed' }, 'p', T0).state, 'completed', 'a finished task stays as it was');
  });
});
