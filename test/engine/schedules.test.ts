/**
 * Recurring schedules through the library, driven by a ManualClock over the memory store:
 * each occurrence delivered once at its time, upsert semantics, pause/resume, limit,
 * endAt, remove, preview; misfire after a restart on a SQLite file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import { ManualClock } from '../../src/core/manual-clock.js';
import type { MisfirePolicy } from '../../src/core/schedule/model.js';
import { DelayQueue } from '../../src/open-queue.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { storeSystemClock } from '../../src/stores/system-clock.js';
import { T0, flush, openManual } from '../helpers/engine.js';

let queues: DelayQueue[] = [];
afterEach(async () => {
  await Promise.all(queues.map((q) => q.close()));
  queues = [];
});

async function step(clock: ManualClock, ms: number, by = 100): Promise<void> {
  for (let t = 0; t < ms; t += by) {
    clock.advance(Math.min(by, ms - t));
    await flush(30);
  }
}

function collect(q: DelayQueue, clock: ManualClock, topic = 'tick'): Array<{ id: string; runAt: number; at: number }> {
  const seen: Array<{ id: string; runAt: number; at: number }> = [];
  q.work(topic, (d) => void seen.push({ id: d.id, runAt: d.runAt, at: clock.now() }));
  return seen;
}

describe('schedules (library, ManualClock)', () => {
  it('everyMs: each occurrence delivered once, on its millisecond, with id <schedule>:<ms>', async () => {
    const { q, clock } = await openManual();
    queues.push(q);
    const seen = collect(q, clock);
    const { schedule, created, changed } = await q.schedules.upsert('beat', { topic: 'tick', everyMs: 1_000, payload: { n: 1 } });
    assert.equal(created, true);
    assert.equal(changed, true);
    assert.equal(schedule.nextAt !== null && schedule.lastAt !== null, true, 'the next occurrence exists already');
    await step(clock, 10_000);
    assert.deepEqual(seen.map((s) => s.id), Array.from({ length: 11 }, (_, i) => `beat:${T0 + i * 1_000}`));
    for (const s of seen) assert.equal(s.at, s.runAt, 'on its millisecond');
    assert.ok((await q.get(`beat:${T0 + 11_000}`))?.state === 'pending', 'the next one is pending ahead of time');
  });

  it('upsert of the same definition changes nothing; a new rule applies from the next occurrence not yet created', async () => {
    const { q, clock } = await openManual();
    queues.push(q);
    const seen = collect(q, clock);
    await q.schedules.upsert('s', { topic: 'tick', everyMs: 1_000, startAt: T0 + 1_000 });
    await step(clock, 2_500);
    const before = await q.schedules.get('s');
    const again = await q.schedules.upsert('s', { topic: 'tick', everyMs: 1_000, startAt: T0 + 1_000 });
    assert.equal(again.changed, false);
    assert.deepEqual(await q.schedules.get('s'), before);
    const changed = await q.schedules.upsert('s', { topic: 'tick', everyMs: 5_000, startAt: T0 });
    assert.equal(changed.changed, true);
    await step(clock, 12_500);
    const times = seen.map((s) => s.runAt - T0);
    // 1000, 2000 before; 3000 and 4000 were created ahead under the old rule; then every 5 s.
    assert.deepEqual(times, [1_000, 2_000, 3_000, 4_000, 5_000, 10_000, 15_000]);
  });

  it('pause cancels what was created ahead and creates nothing; resume goes on from now', async () => {
    const { q, clock } = await openManual();
    queues.push(q);
    const seen = collect(q, clock);
    await q.schedules.upsert('s', { topic: 'tick', everyMs: 1_000, startAt: T0 + 1_000 });
    await step(clock, 1_500);
    const paused = await q.schedules.pause('s');
    assert.equal(paused.paused, true);
    await step(clock, 5_000);
    assert.deepEqual(seen.map((s) => s.runAt - T0), [1_000]);
    await q.schedules.resume('s');
    await step(clock, 2_000);
    assert.deepEqual(seen.map((s) => s.runAt - T0), [1_000, 7_000, 8_000]);
    await assert.rejects(() => q.schedules.pause('nope'), (e: unknown) => isDelayQError(e, 'SCHEDULE_NOT_FOUND'));
  });

  it('limit and endAt end the schedule; next() previews within them', async () => {
    const { q, clock } = await openManual();
    queues.push(q);
    const seen = collect(q, clock);
    await q.schedules.upsert('lim', { topic: 'tick', everyMs: 1_000, limit: 3, startAt: T0 + 1_000 });
    await q.schedules.upsert('end', { topic: 'tick', everyMs: 1_000, startAt: T0 + 500, endAt: T0 + 2_600 });
    assert.deepEqual(await q.schedules.next('lim', 10), [T0 + 1_000, T0 + 2_000, T0 + 3_000]);
    assert.deepEqual(await q.schedules.next('end', 10), [T0 + 500, T0 + 1_500, T0 + 2_500]);
    await step(clock, 10_000);
    assert.equal(seen.filter((s) => s.id.startsWith('lim:')).length, 3);
    assert.equal(seen.filter((s) => s.id.startsWith('end:')).length, 3);
    assert.equal((await q.schedules.get('lim'))?.nextAt, null);
    assert.deepEqual(await q.schedules.next('lim', 5), []);
    // Past its endAt (the queue's clock), the same definition is refused: it has no occurrence left.
    await assert.rejects(q.schedules.upsert('end', { topic: 'tick', everyMs: 1_000, startAt: T0 + 500, endAt: T0 + 2_600 }), (e: unknown) => isDelayQError(e, 'INVALID_SCHEDULE') && /^endAt: is already past/.test(e.message));
  });

  it('upsert and upsertMany refuse, by the queue clock, a 28 MB cron pattern at once, impossible dates, times past the Date range and a schedule with no occurrence left', async () => {
    const { q, clock } = await openManual();
    queues.push(q);
    const started = performance.now();
    const huge = `0 0 * * ${'MON,'.repeat(7_000_000)}MON`;
    await assert.rejects(q.schedules.upsertMany([{ id: 'ok', topic: 't', everyMs: 1_000 }, { id: 'huge', topic: 't', cron: huge }]), (e: unknown) => isDelayQError(e, 'INVALID_SCHEDULE') && e.details?.['index'] === 1 && e.message.length < 200);
    assert.ok(performance.now() - started < 2_000);
    const bad: Array<[object, RegExp]> = [
      [{ topic: 't', cron: '0 0 * * *', startAt: '2030-02-30T00:00:00Z' }, /^startAt: /],
      [{ topic: 't', everyMs: 1_000, endAt: 1e20 }, /^endAt: must be at most/],
      [{ topic: 't', everyMs: 1_000, endAt: T0 }, /^endAt: is already past/],
      [{ topic: 't', everyMs: 86_400_000, endAt: T0 + 60_000, startAt: T0 - 1 }, /no occurrence from now on/],
    ];
    for (const [input, message] of bad) await assert.rejects(q.schedules.upsert('s', input as never), (e: unknown) => isDelayQError(e, 'INVALID_SCHEDULE') && message.test(e.message), message.source);
    clock.advance(60_000);
    await assert.rejects(q.schedules.upsert('s', { topic: 't', everyMs: 1_000, endAt: T0 + 30_000 }), (e: unknown) => isDelayQError(e, 'INVALID_SCHEDULE'));
    assert.deepEqual(await q.schedules.list(), []);
  });

  it('listPage: pages by id with a cursor; limit 1 to 1000 (INVALID_OPTION), after a schedule id (INVALID_ID)', async () => {
    const { q } = await openManual();
    queues.push(q);
    await q.schedules.upsertMany(['c', 'a', 'd', 'b'].map((id) => ({ id, topic: 't', everyMs: 86_400_000, startAt: T0 + 86_400_000 })));
    const first = await q.schedules.listPage({ limit: 3 });
    assert.deepEqual([first.schedules.map((s) => s.id), first.next], [['a', 'b', 'c'], 'c']);
    const second = await q.schedules.listPage({ limit: 3, afterId: 'c' });
    assert.deepEqual([second.schedules.map((s) => s.id), second.next], [['d'], null]);
    assert.equal((await q.schedules.listPage()).schedules.length, 4);
    await assert.rejects(q.schedules.listPage({ limit: 1_001 }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
    await assert.rejects(q.schedules.listPage({ afterId: 'a b' }), (e: unknown) => isDelayQError(e, 'INVALID_ID'));
  });

  it('remove deletes the schedule and cancels its occurrence created ahead', async () => {
    const { q, clock } = await openManual();
    queues.push(q);
    const seen = collect(q, clock);
    await q.schedules.upsert('s', { topic: 'tick', everyMs: 1_000, startAt: T0 + 1_000 });
    await step(clock, 1_500);
    assert.equal(await q.schedules.remove('s'), true);
    assert.equal(await q.schedules.remove('s'), false);
    await step(clock, 5_000);
    assert.equal(seen.length, 1);
    assert.equal(await q.schedules.get('s'), null);
    assert.deepEqual(await q.schedules.list(), []);
  });

  it('upsertMany: each as upsert would (created, unchanged, changed), an id twice in order; a bad one rejects the call with its index and stores nothing', async () => {
    const { q, clock } = await openManual();
    queues.push(q);
    const seen = collect(q, clock);
    const first = await q.schedules.upsertMany([
      { id: 'a', topic: 'tick', everyMs: 1_000 },
      { id: 'b', topic: 'tick', everyMs: 2_000, payload: { b: 1 } },
    ]);
    assert.deepEqual(first.map((r) => [r.schedule.id, r.created, r.changed]), [['a', true, true], ['b', true, true]]);
    assert.ok(first.every((r) => r.schedule.lastAt !== null), 'the next occurrence of each exists already');
    const second = await q.schedules.upsertMany([
      { id: 'a', topic: 'tick', everyMs: 1_000 },
      { id: 'b', topic: 'tick', everyMs: 2_000, payload: { b: 2 } },
      { id: 'b', topic: 'tick', everyMs: 2_000, payload: { b: 2 } },
    ]);
    assert.deepEqual(second.map((r) => [r.schedule.id, r.created, r.changed]), [['a', false, false], ['b', false, true], ['b', false, false]]);
    await assert.rejects(q.schedules.upsertMany([{ id: 'c', topic: 'tick', everyMs: 1_000 }, { id: 'd', topic: 'tick', everyMs: 5 }]), (error: unknown) => {
      assert.ok(isDelayQError(error));
      assert.equal(error.code, 'INVALID_SCHEDULE');
      assert.equal(error.details?.['index'], 1);
      return true;
    });
    assert.deepEqual((await q.schedules.list()).map((s) => s.id), ['a', 'b']);
    await step(clock, 2_000);
    assert.deepEqual(seen.map((s) => s.id).sort(), [`a:${T0}`, `a:${T0 + 1_000}`, `a:${T0 + 2_000}`, `b:${T0}`, `b:${T0 + 2_000}`]);
  });

  it('the first occurrence is created once it is due within scheduleLeadMs, not at upsert', async () => {
    const { q, clock } = await openManual();
    queues.push(q);
    const seen = collect(q, clock);
    const first = T0 + 60_000;
    const { schedule } = await q.schedules.upsert('later', { topic: 'tick', everyMs: 60_000, startAt: first });
    assert.deepEqual([schedule.nextAt, schedule.lastAt, schedule.count], [first, null, 0]);
    assert.equal(await q.get(`later:${first}`), null, 'no task while the first time is beyond the lead');
    await step(clock, 60_000 - 1_500 - 100, 1_000);
    assert.equal(await q.get(`later:${first}`), null);
    await step(clock, 200);
    assert.equal((await q.get(`later:${first}`))?.state, 'pending', 'created within the lead');
    await step(clock, 1_400);
    assert.deepEqual(seen.map((s) => [s.id, s.at]), [[`later:${first}`, first]]);
  });

  it('concurrent upserts share their store calls and each gets its own answer', async () => {
    const { q } = await openManual();
    queues.push(q);
    const results = await Promise.all([
      q.schedules.upsert('x', { topic: 'tick', everyMs: 1_000 }),
      q.schedules.upsert('y', { topic: 'tick', everyMs: 1_000 }),
      q.schedules.upsert('x', { topic: 'tick', everyMs: 3_000 }),
      q.schedules.upsert('bad', { topic: 'tick', everyMs: 5 }).catch((error: unknown) => error),
    ]);
    assert.deepEqual(results.slice(0, 3).map((r) => ('schedule' in (r as object) ? [(r as { schedule: { id: string; everyMs: number } }).schedule.id, (r as { schedule: { everyMs: number } }).schedule.everyMs, (r as { created: boolean }).created] : r)), [
      ['x', 1_000, true],
      ['y', 1_000, true],
      ['x', 3_000, false],
    ]);
    assert.ok(isDelayQError(results[3]) && results[3].code === 'INVALID_SCHEDULE');
    assert.equal((await q.schedules.get('x'))?.everyMs, 3_000);
  });

  it('re-reads the schedules only after a change: not while they fire, at once after a write elsewhere', async () => {
    const store = new MemoryStore();
    let reads = 0;
    const schedules = new Proxy(store.schedules, {
      get(target, key) {
        if (key === 'listSchedules') return () => (reads++, target.listSchedules());
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const counted = new Proxy(store, {
      get(target, key) {
        if (key === 'schedules') return schedules;
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const { q, clock } = await openManual({ store: counted, scheduleSyncMs: 5_000 });
    queues.push(q);
    const seen = collect(q, clock);
    await q.schedules.upsert('a', { topic: 'tick', everyMs: 1_000 });
    await step(clock, 6_000);
    const settled = reads;
    await step(clock, 30_000, 250);
    assert.equal(reads, settled, '30 s of occurrences (a swap each) and six sync periods: no read of the list');
    assert.equal(seen.length, 37);
    // Another process's writes (straight to the store): a new schedule, then a removal.
    const a = (await store.schedules.getSchedule('a'))!;
    await store.schedules.putSchedule({ ...a, id: 'b', topic: 'other', nextAt: clock.now() + 2_000, lastAt: null, count: 0 });
    const others = collect(q, clock, 'other');
    await step(clock, 5_000 + 2_000, 250);
    assert.equal(reads, settled + 1, 'one read after the change');
    assert.ok(others.length >= 1, 'the schedule written elsewhere fires here');
    await store.schedules.deleteSchedule('a');
    await step(clock, 5_000 + 1_000, 250);
    const afterRemoval = seen.length;
    await step(clock, 5_000, 250);
    assert.equal(seen.length, afterRemoval, 'the schedule removed elsewhere stopped here');
    assert.equal(reads, settled + 2);
  });

  it('cron with a time zone: next() previews wall-clock times', async () => {
    const { q } = await openManual();
    queues.push(q);
    await q.schedules.upsert('ny', { topic: 'tick', cron: '30 9 * * MON-FRI', tz: 'America/New_York' });
    const next = await q.schedules.next('ny', 3);
    // T0 is Tue 2030-01-01 00:00Z; 09:30 EST = 14:30Z.
    assert.deepEqual(next.map((t) => new Date(t).toISOString()), ['2030-01-01T14:30:00.000Z', '2030-01-02T14:30:00.000Z', '2030-01-03T14:30:00.000Z']);
    await assert.rejects(() => q.schedules.upsert('bad', { topic: 't', cron: '* * *' }), (e: unknown) => isDelayQError(e, 'INVALID_SCHEDULE'));
    assert.equal(await q.schedules.get('bad'), null, 'nothing stored');
  });
});

describe('schedules across a restart (SQLite file, ManualClock engine)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'delayq-cron-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function open(path: string, clock: ManualClock): Promise<DelayQueue> {
    return DelayQueue.open({ store: `sqlite:${path}`, storeOptions: { clock: storeSystemClock }, clock });
  }

  for (const [misfire, expected] of [
    // Down from 2.1 s to 10.5 s; grace 1 s: 5 s ... 9 s are missed (3 s and 4 s were created ahead before the stop).
    ['skip', [1_000, 2_000, 3_000, 4_000, 10_000, 11_000, 12_000]],
    ['once', [1_000, 2_000, 3_000, 4_000, 9_000, 10_000, 11_000, 12_000]],
    ['all', [1_000, 2_000, 3_000, 4_000, 5_000, 6_000, 7_000, 8_000, 9_000, 10_000, 11_000, 12_000]],
  ] as Array<[MisfirePolicy, number[]]>) {
    it(`misfire ${misfire}: occurrences missed while no queue ran`, async () => {
      const path = join(dir, `${misfire}.db`);
      const clock = new ManualClock(T0);
      const first = await open(path, clock);
      const seen = collect(first, clock);
      await first.schedules.upsert('s', { topic: 'tick', everyMs: 1_000, misfire, startAt: T0 + 1_000 });
      await step(clock, 2_100);
      await first.close();
      clock.advance(8_400);
      const second = await open(path, clock);
      queues.push(second);
      const seen2 = collect(second, clock);
      await step(clock, 2_000);
      const all = [...seen, ...seen2].map((s) => s.runAt - T0).sort((a, b) => a - b);
      assert.deepEqual(all, expected);
      assert.equal((await second.schedules.get('s'))?.misfire, misfire, 'the schedule survived the restart');
    });
  }
});
