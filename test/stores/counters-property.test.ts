/**
 * Property test: the per-(topic, state) counters that `stats` reports follow the delta
 * model of src/core/task/counter-deltas.ts on every store. Random sequences of the port's
 * task operations run on the memory store, a SQLite file and a Redis namespace alike; after
 * each operation every task is read back (`get`), its change of state (or its purge) is
 * turned into deltas by the model, and the sum of those deltas must be what `stats` says.
 * The memory and SQLite stores apply the model's deltas themselves; the Redis scripts spell
 * them in Lua, the PostgreSQL store's batch statements in SQL (its other writes apply the
 * model), and this is what holds them all to the same counts. The stores must also agree on
 * every task's state, the same operations having run on each.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { TaskStore } from '../../src/core/ports/index.js';
import { CounterTally, statsOfCounters, type StateOrNone } from '../../src/core/task/counter-deltas.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { openPostgresStore } from '../../src/stores/postgres/index.js';
import { openSqliteStore } from '../../src/stores/sqlite/index.js';
import { storeSystemClock } from '../../src/stores/system-clock.js';
import { task } from '../../src/testing/store-conformance/index.js';
import { dropSchema, freshSchema, storeUrl } from '../helpers/postgres.js';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis-servers.js';

const IDS = ['t0', 't1', 't2', 't3', 't4', 't5'];
const TOPICS = ['mail', 'sms', 'push'];
const DAY_MS = 24 * 3600 * 1000;
const T0 = Date.UTC(2026, 0, 1);

type Op =
  | { kind: 'schedule'; tasks: { id: string; topic: string; delay: number; maxAttempts: number }[] }
  | { kind: 'advance'; ms: number }
  | { kind: 'cancel'; pick: number; n: number }
  | { kind: 'reschedule'; pick: number; delay: number }
  | { kind: 'reserve'; pick: number; n: number; ttrMs: number }
  | { kind: 'ack'; pick: number; n: number; stale: boolean }
  | { kind: 'nack'; pick: number; delayMs: number | undefined }
  | { kind: 'expire'; pick: number }
  | { kind: 'defer'; pick: number; delay: number }
  | { kind: 'cancelDead'; pick: number }
  | { kind: 'retryDead'; pick: number; delay: number }
  | { kind: 'purge'; ageMs: number };

const id = fc.constantFrom(...IDS);
// Operations on existing tasks pick among those in the state the operation moves (see
// `targets`), so that most of them change something; a pick with none there names any id.
const pick = fc.nat();
const n = fc.integer({ min: 1, max: 4 });
// Near (due within the steps of a run), and far enough that the durable stores park it.
const delay = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 300 }) }, { weight: 1, arbitrary: fc.integer({ min: 2 * DAY_MS, max: 40 * DAY_MS }) });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .array(fc.record({ id, topic: fc.constantFrom(...TOPICS), delay, maxAttempts: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 4 })
      .map((tasks) => ({ kind: 'schedule' as const, tasks })),
  },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 1_000 }).map((ms) => ({ kind: 'advance' as const, ms })) },
  { weight: 1, arbitrary: fc.record({ pick, n }).map((o) => ({ kind: 'cancel' as const, ...o })) },
  { weight: 1, arbitrary: fc.record({ pick, delay }).map((o) => ({ kind: 'reschedule' as const, ...o })) },
  { weight: 4, arbitrary: fc.record({ pick, n, ttrMs: fc.integer({ min: 50, max: 1_500 }) }).map((o) => ({ kind: 'reserve' as const, ...o })) },
  { weight: 3, arbitrary: fc.record({ pick, n, stale: fc.integer({ min: 0, max: 3 }).map((k) => k === 0) }).map((o) => ({ kind: 'ack' as const, ...o })) },
  { weight: 3, arbitrary: fc.record({ pick, delayMs: fc.option(fc.integer({ min: 0, max: 1_000 }), { nil: undefined }) }).map((o) => ({ kind: 'nack' as const, ...o })) },
  { weight: 2, arbitrary: pick.map((p) => ({ kind: 'expire' as const, pick: p })) },
  { weight: 1, arbitrary: fc.record({ pick, delay }).map((o) => ({ kind: 'defer' as const, ...o })) },
  { weight: 1, arbitrary: pick.map((p) => ({ kind: 'cancelDead' as const, pick: p })) },
  { weight: 2, arbitrary: fc.record({ pick, delay }).map((o) => ({ kind: 'retryDead' as const, ...o })) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 3_000 }).map((ageMs) => ({ kind: 'purge' as const, ageMs })) },
);

/** One store under test, with what the test has seen of it. */
interface Subject {
  readonly name: string;
  readonly store: TaskStore;
  /** The current receipt of each task this store reserved. */
  readonly receipts: Map<string, string>;
  /** Each task's state as last read (null: none, or purged). */
  readonly seen: Map<string, StateOrNone>;
  /** The model's counters: the deltas of every change of state read so far, summed. */
  readonly reference: CounterTally;
  readonly topics: Map<string, string>;
  readonly close: () => Promise<void>;
}

function subject(name: string, store: TaskStore, close: () => Promise<void>): Subject {
  return { name, store, receipts: new Map(), seen: new Map(), reference: new CounterTally(), topics: new Map(), close };
}

/** Up to `count` ids of tasks in `state`, from the `pick`-th on; without any, the `pick`-th id. */
function targets(s: Subject, state: StateOrNone, pick: number, count = 1): string[] {
  const inState = IDS.filter((i) => (s.seen.get(i) ?? null) === state);
  if (inState.length === 0) return [IDS[pick % IDS.length]!];
  return Array.from({ length: Math.min(count, inState.length) }, (_, k) => inState[(pick + k) % inState.length]!);
}

async function apply(s: Subject, o: Op, now: number): Promise<void> {
  const { store, receipts } = s;
  const reserved = (list: readonly { id: string; receipt: string | null }[]) => list.forEach((r) => receipts.set(r.id, r.receipt!));
  const receiptOf = (i: string) => receipts.get(i) ?? '1.none';
  const [one] = 'pick' in o ? targets(s, o.kind === 'cancelDead' || o.kind === 'retryDead' ? 'dead' : o.kind === 'reschedule' ? 'pending' : 'reserved', o.pick) : [];
  const target = one!;
  switch (o.kind) {
    case 'schedule':
      await store.tasks.schedule(
        o.tasks.map((t) => task(t.id, { topic: t.topic, runAt: now + t.delay, maxAttempts: t.maxAttempts, backoff: { baseMs: 100, factor: 2, maxMs: 1_000, jitter: 0 } })),
        now,
      );
      return;
    case 'advance':
      return;
    case 'cancel': {
      const ids = targets(s, 'pending', o.pick, o.n);
      if (ids.length === 1) await store.tasks.cancel(ids[0]!, now);
      else await store.tasks.cancelMany(ids, now);
      return;
    }
    case 'reschedule':
      await store.tasks.reschedule(target, now + o.delay, now);
      return;
    case 'reserve':
      reserved(await store.tasks.reserve(targets(s, 'pending', o.pick, o.n), now, o.ttrMs));
      return;
    case 'ack': {
      const acks = targets(s, 'reserved', o.pick, o.n).map((i) => ({ id: i, receipt: o.stale ? `${receiptOf(i)}x` : receiptOf(i) }));
      if (acks.length === 1) await store.tasks.ack(acks[0]!.id, acks[0]!.receipt, now);
      else await store.tasks.ackMany(acks, now);
      return;
    }
    case 'nack':
      await store.tasks.nack({ id: target, receipt: receiptOf(target), now, ...(o.delayMs === undefined ? {} : { delayMs: o.delayMs }), random: 0.5, error: 'failed' });
      return;
    case 'expire':
      await store.tasks.expire(target, receiptOf(target), now);
      return;
    case 'defer':
      await store.tasks.defer({ id: target, receipt: receiptOf(target), runAt: now + o.delay, now });
      return;
    case 'cancelDead':
      await store.tasks.cancelDead(target, now);
      return;
    case 'retryDead':
      await store.tasks.retryDead(target, now + o.delay, now);
      return;
    case 'purge':
      // Without a limit that leaves some out: which ones a limit keeps is each store's own.
      await store.tasks.purge(now - o.ageMs, IDS.length);
      return;
  }
}

/** Reads every task back and adds the model's deltas of each change of state to the reference. */
async function observe(s: Subject): Promise<void> {
  for (const i of IDS) {
    const record = await s.store.tasks.get(i);
    const from = s.seen.get(i) ?? null;
    const to = record?.state ?? null;
    // A purged task's topic is the one it had; a new task's is its own.
    const topic = record?.topic ?? s.topics.get(i);
    if (record !== null) s.topics.set(i, record.topic);
    if (topic !== undefined) s.reference.add(topic, from, to);
    s.seen.set(i, to);
  }
}

async function checkRun(open: () => Promise<Subject[]>, ops: readonly Op[]): Promise<void> {
  const subjects = await open();
  try {
    let now = T0;
    for (const [step, o] of ops.entries()) {
      if (o.kind === 'advance') now += o.ms;
      else now += 1;
      for (const s of subjects) {
        await apply(s, o, now);
        await observe(s);
        const expected = statsOfCounters(s.reference.entries());
        assert.deepEqual(await s.store.tasks.stats(), expected, `${s.name}: stats after step ${step} (${JSON.stringify(o)}) differ from the delta model`);
      }
      const [first, ...others] = subjects;
      for (const other of others)
        assert.deepEqual(Object.fromEntries(other.seen), Object.fromEntries(first!.seen), `${other.name} and ${first!.name} disagree on task states after step ${step} (${JSON.stringify(o)})`);
    }
  } finally {
    for (const s of subjects) await s.close();
  }
}

async function memorySubject(): Promise<Subject> {
  const store = new MemoryStore();
  return subject('memory', store, () => store.close());
}

async function sqliteSubject(): Promise<Subject> {
  const dir = mkdtempSync(join(tmpdir(), 'delayq-counters-'));
  const store = await openSqliteStore(join(dir, 'tasks.db'), { clock: storeSystemClock });
  return subject('sqlite', store, async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
}

const RUNS = 40;
const OPS = { minLength: 10, maxLength: 60, size: 'max' as const };

describe('stats counters follow the delta model', () => {
  it('on the memory store and a SQLite file', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, OPS), (ops) => checkRun(async () => [await memorySubject(), await sqliteSubject()], ops)),
      { numRuns: RUNS },
    );
  });
});

const skip = redisSkip();
let server: RedisServer | undefined;
let namespaces = 0;

describe('stats counters follow the delta model, Redis too', { skip }, () => {
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server?.stop();
    server?.remove();
  });

  it('on the memory store, a SQLite file and a Redis namespace of 4 shards', async () => {
    const redisSubject = async (): Promise<Subject> => {
      const store = await openRedisStore(server!.url, { clock: storeSystemClock, prefix: `c${++namespaces}`, shards: 4 });
      return subject('redis', store, () => store.close());
    };
    await fc.assert(
      fc.asyncProperty(fc.array(op, OPS), (ops) => checkRun(async () => [await memorySubject(), await sqliteSubject(), await redisSubject()], ops)),
      { numRuns: RUNS },
    );
  });
});

describe('stats counters follow the delta model, PostgreSQL too', () => {
  it('on the memory store and a PostgreSQL schema (of its own per run, dropped after)', async () => {
    const postgresSubject = async (): Promise<Subject> => {
      const schema = freshSchema('counters');
      const store = await openPostgresStore(storeUrl(schema), { clock: storeSystemClock });
      return subject('postgres', store, async () => {
        await store.close();
        await dropSchema(schema);
      });
    };
    await fc.assert(
      fc.asyncProperty(fc.array(op, OPS), (ops) => checkRun(async () => [await memorySubject(), await postgresSubject()], ops)),
      { numRuns: RUNS },
    );
  });
});
