/**
 * Planning by the owner (SchedulePlanning): two schedule loops, two "processes" over one
 * store with a ManualClock, each owning some partitions. Each schedule is planned by its
 * owner only; a partition taken over is re-read and planned with the takeover allowance
 * (nothing lost, nothing created twice, misfire beyond it); a change made through a process
 * that does not own the schedule is planned there until the owner has read it.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { silentLogger } from '../../src/core/logger.js';
import { ManualClock } from '../../src/core/manual-clock.js';
import type { RecurringScheduleStore } from '../../src/core/ports/index.js';
import { scheduleRecord, type MisfirePolicy, type RecurringScheduleRecord } from '../../src/core/schedule/model.js';
import { DEFAULT_ENGINE_TUNING } from '../../src/core/options.js';
import { DEFAULT_BACKOFF } from '../../src/core/task/backoff.js';
import type { NewTaskRecord } from '../../src/core/task/model.js';
import { compileCron } from '../../src/engine/recurring/cron-pattern.js';
import { InFlight } from '../../src/engine/in-flight.js';
import { RecurringScheduleLoop, type RecurringLoopContext } from '../../src/engine/recurring/recurring-loop.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { flush, T0 } from '../helpers/engine.js';
import { ManualPlanning } from '../helpers/manual-planning.js';

const PARTITIONS = 4;
const TAKEOVER_MS = 5_000;
const SYNC_MS = 5_000;

/** Occurrence ids created in the store, and the tasks each process asked to create. */
class Tasks {
  readonly created = new Set<string>();
  readonly asked = new Map<string, string[]>();

  creator(name: string): (tasks: readonly NewTaskRecord[]) => Promise<void> {
    this.asked.set(name, []);
    return async (tasks) => {
      for (const task of tasks) {
        this.asked.get(name)!.push(task.id);
        this.created.add(task.id);
      }
    };
  }
}

/** The store, with the schedule swaps each process made counted by schedule id. */
function counting(store: MemoryStore, swaps: Map<string, number>): RecurringScheduleStore {
  return new Proxy(store.schedules, {
    get(target, property) {
      if (property === 'swapSchedules')
        return (list: readonly { expected: RecurringScheduleRecord; next: RecurringScheduleRecord }[]) => {
          for (const { next } of list) swaps.set(next.id, (swaps.get(next.id) ?? 0) + 1);
          return target.swapSchedules(list);
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function record(id: string, misfire: MisfirePolicy = 'once'): RecurringScheduleRecord {
  return scheduleRecord(
    { id, topic: 'tick', payload: 'null', cron: null, tz: 'UTC', everyMs: 1_000, startAt: T0 + 1_000, endAt: null, limit: null, misfire, ttrMs: 30_000, maxAttempts: 5, backoff: DEFAULT_BACKOFF, url: null, priority: 0 },
    { paused: false, nextAt: T0 + 1_000, lastAt: null, count: 0 },
    1,
    T0,
    T0,
  );
}

interface Node {
  readonly loop: RecurringScheduleLoop;
  readonly planning: ManualPlanning;
  readonly swaps: Map<string, number>;
}

let loops: RecurringScheduleLoop[] = [];
afterEach(async () => {
  await Promise.all(loops.map((loop) => loop.stop()));
  loops = [];
});

/** The loop's context: lead 1.5 s, grace 1 s, sync SYNC_MS, retry 1 s. */
function context(store: RecurringScheduleStore, clock: ManualClock): RecurringLoopContext {
  const tuning = { ...DEFAULT_ENGINE_TUNING, scheduleLeadMs: 1_500, scheduleGraceMs: 1_000, scheduleSyncMs: SYNC_MS, storeRetryMs: 1_000 };
  return { store, clock, logger: silentLogger, inFlight: new InFlight(), tuning };
}

function node(name: string, store: MemoryStore, clock: ManualClock, tasks: Tasks, owned: number[]): Node {
  const planning = new ManualPlanning(PARTITIONS, TAKEOVER_MS, owned);
  const swaps = new Map<string, number>();
  const loop = new RecurringScheduleLoop(context(counting(store, swaps), clock), { compile: compileCron, create: tasks.creator(name), planning });
  loops.push(loop);
  return { loop, planning, swaps };
}

async function step(clock: ManualClock, ms: number, by = 100): Promise<void> {
  for (let t = 0; t < ms; t += by) {
    clock.advance(Math.min(by, ms - t));
    await flush(20);
  }
}

/** `count` schedule ids, and the partition of each. */
function schedules(count: number, planning: ManualPlanning): { ids: string[]; partitionOf: Map<string, number> } {
  const ids = Array.from({ length: count }, (_, i) => `s${i}`);
  return { ids, partitionOf: new Map(ids.map((id) => [id, planning.partitionOf(id)])) };
}

/** The occurrence ids of `ids` from T0 + 1 s up to and including `until`. */
function occurrences(ids: readonly string[], until: number): string[] {
  const out: string[] = [];
  for (const id of ids) for (let at = T0 + 1_000; at <= until; at += 1_000) out.push(`${id}:${at}`);
  return out.sort();
}

describe('schedules planned by the owner of their partition', () => {
  it('each schedule is planned (created and swapped) by the process that owns its partition, and by no other', async () => {
    const clock = new ManualClock(T0);
    const store = new MemoryStore();
    const tasks = new Tasks();
    const a = node('a', store, clock, tasks, [0, 1]);
    const b = node('b', store, clock, tasks, [2, 3]);
    const { ids, partitionOf } = schedules(20, a.planning);
    assert.ok(new Set(partitionOf.values()).size === PARTITIONS, 'the ids fall into every partition');
    await store.schedules.putSchedules(ids.map((id) => record(id)));
    a.loop.start();
    b.loop.start();
    await step(clock, 10_000);
    const created = [...tasks.created].filter((id) => Number(id.split(':')[1]) <= clock.now()).sort();
    assert.deepEqual(created, occurrences(ids, clock.now()), 'every occurrence so far created');
    for (const [name, n] of [['a', a], ['b', b]] as const) {
      const mine = new Set(ids.filter((id) => n.planning.owns(partitionOf.get(id)!)));
      const foreign = tasks.asked.get(name)!.filter((task) => !mine.has(task.split(':')[0]!));
      assert.deepEqual(foreign, [], `${name} created no occurrence of another's schedule`);
      assert.deepEqual([...n.swaps.keys()].filter((id) => !mine.has(id)), [], `${name} swapped no schedule of another`);
      for (const id of mine) assert.ok((n.swaps.get(id) ?? 0) >= 9, `${name} planned its ${id}`);
    }
    const asked = [...tasks.asked.values()].flat();
    assert.equal(asked.length, new Set(asked).size, 'no occurrence asked for twice');
  });

  it("when a process dies, the one that takes its partitions re-reads their schedules and creates every occurrence its planner missed, none twice", async () => {
    const clock = new ManualClock(T0);
    const store = new MemoryStore();
    const tasks = new Tasks();
    const a = node('a', store, clock, tasks, [0, 1]);
    const b = node('b', store, clock, tasks, [2, 3]);
    const { ids, partitionOf } = schedules(12, a.planning);
    await store.schedules.putSchedules(ids.map((id, i) => record(id, (['once', 'skip', 'all'] as const)[i % 3])));
    a.loop.start();
    b.loop.start();
    await step(clock, 10_000);
    // a dies: it plans no more, and its partitions are b's once its lease has run out.
    await a.loop.stop();
    const diedAt = clock.now();
    const askedBefore = tasks.asked.get('b')!.length;
    await step(clock, TAKEOVER_MS);
    b.planning.take(0);
    b.planning.take(1);
    await step(clock, 5_000);
    const created = [...tasks.created].filter((id) => Number(id.split(':')[1]) <= clock.now()).sort();
    assert.deepEqual(created, occurrences(ids, clock.now()), "every occurrence created, the dead planner's too, whatever the misfire policy");
    const taken = tasks.asked.get('b')!.slice(askedBefore).filter((id) => (partitionOf.get(id.split(':')[0]!) ?? 9) < 2);
    // The re-read copy, not the one read at start: nothing a had created is asked for again.
    assert.deepEqual(taken.filter((id) => Number(id.split(':')[1]) <= diedAt + 1_000), [], 'no occurrence a created is created again');
    assert.equal(taken.length, new Set(taken).size);
  });

  it('a partition taken after the takeover allowance: older occurrences are misfires, per the misfire policy', async () => {
    const clock = new ManualClock(T0);
    const store = new MemoryStore();
    const tasks = new Tasks();
    const a = node('a', store, clock, tasks, [0, 1]);
    const b = node('b', store, clock, tasks, [2, 3]);
    const ids = ['skip-0', 'skip-1', 'skip-2', 'skip-3', 'skip-4', 'skip-5', 'skip-6', 'skip-7'].filter((id) => a.planning.owns(a.planning.partitionOf(id)));
    assert.ok(ids.length > 0);
    await store.schedules.putSchedules(ids.map((id) => record(id, 'skip')));
    a.loop.start();
    b.loop.start();
    await step(clock, 5_000);
    await a.loop.stop();
    // Nobody owned the partitions for 20 s: more than takeoverMs + graceMs.
    await step(clock, 20_000);
    const takenAt = clock.now();
    b.planning.take(0);
    b.planning.take(1);
    await step(clock, 3_000);
    for (const id of ids) {
      const times = [...tasks.created].filter((t) => t.startsWith(`${id}:`)).map((t) => Number(t.split(':')[1]));
      const gap = times.filter((t) => t > T0 + 7_000 && t < takenAt - 1_000 - TAKEOVER_MS);
      assert.deepEqual(gap, [], `${id}: misfire skip drops what is older than the allowance`);
      assert.ok(times.includes(takenAt - TAKEOVER_MS), `${id}: what is within the allowance is created`);
    }
  });

  it('a schedule changed through a process that does not own it is planned there until its owner has read it', async () => {
    const clock = new ManualClock(T0);
    const store = new MemoryStore();
    const tasks = new Tasks();
    const a = node('a', store, clock, tasks, [0, 1]);
    const b = node('b', store, clock, tasks, [2, 3]);
    a.loop.start();
    b.loop.start();
    await step(clock, 1_000);
    // b's schedule, written and applied through a (as an upsert does).
    const id = ['x0', 'x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8'].find((x) => b.planning.owns(b.planning.partitionOf(x)))!;
    const fresh = scheduleRecord({ ...record(id), startAt: T0 + 2_000 }, { paused: false, nextAt: T0 + 2_000, lastAt: null, count: 0 }, 1, clock.now(), clock.now());
    await store.schedules.putSchedules([fresh]);
    await a.loop.apply(fresh);
    await step(clock, 3 * SYNC_MS);
    const times = [...tasks.created].filter((t) => t.startsWith(`${id}:`)).map((t) => Number(t.split(':')[1])).sort((x, y) => x - y);
    const expected = Array.from({ length: (clock.now() - (T0 + 2_000)) / 1_000 + 1 }, (_, i) => T0 + 2_000 + i * 1_000);
    assert.deepEqual(times.filter((t) => t <= clock.now()), expected, 'no occurrence missing while b had not read it yet');
    assert.ok((a.swaps.get(id) ?? 0) > 0 && (b.swaps.get(id) ?? 0) > 0, 'planned by a first, then by b');
    const before = a.swaps.get(id);
    await step(clock, 3_000);
    assert.equal(a.swaps.get(id), before, 'a has left it to its owner');
  });

  it('without planning (memory, SQLite) a loop plans every schedule', async () => {
    const clock = new ManualClock(T0);
    const store = new MemoryStore();
    const tasks = new Tasks();
    const loop = new RecurringScheduleLoop(context(store.schedules, clock), { compile: compileCron, create: tasks.creator('solo'), planning: null });
    loops.push(loop);
    const ids = ['p', 'q', 'r'];
    await store.schedules.putSchedules(ids.map((id) => record(id)));
    loop.start();
    await step(clock, 4_000);
    assert.deepEqual([...tasks.created].filter((t) => Number(t.split(':')[1]) <= clock.now()).sort(), occurrences(ids, clock.now()));
  });
});
