import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { isDelayQError } from '../../../src/core/errors.js';
import { openPostgresStore } from '../../../src/stores/postgres/index.js';
import { SCHEMA_VERSION } from '../../../src/stores/postgres/schema.js';
import { shardOf } from '../../../src/coordination/router.js';
import { runSharedConformance } from '../../../src/testing/shared-conformance.js';
import type { PostgresStore } from '../../../src/stores/postgres/postgres-store.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { runStoreConformance, task } from '../../../src/testing/store-conformance/index.js';
import { dropSchema, freshSchema, PG_URL, pgUrlWith, storeUrl, withClient } from '../../helpers/postgres.js';
import { createPool } from '../../../src/stores/postgres/connection.js';
import { FLOOR_SWEEP_MS, FULL_WALK_MS } from '../../../src/stores/postgres/ready-reserver.js';
import pg from 'pg';
import { parsePgReadyNotice } from '../../../src/coordination/notices.js';
import { DEFAULT_BACKOFF, backoffDelay } from '../../../src/core/task/backoff.js';
import { DEFAULT_TASK_DEFAULTS } from '../../../src/core/task/validate.js';
import { forSchema, loadMigrations, statement } from '../../../src/stores/postgres/sql-files.js';
import { PgContext, PLANNED_FROM } from '../../../src/stores/postgres/context.js';
import { COUNTER_ROTATE_MS, COUNTER_SLOTS } from '../../../src/stores/postgres/counters.js';

// Each case on a schema of its own, dropped after it.
runStoreConformance('postgres', async () => {
  const schema = freshSchema('conf');
  const store = await openPostgresStore(storeUrl(schema), { clock: storeSystemClock });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await dropSchema(schema);
    },
  };
});

// Several processes on one schema: a lease runs 5 s and a tick renews or takes one every second.
const sharedSchemas: string[] = [];
describe('postgres store, several processes', () => {
  after(async () => {
    for (const schema of sharedSchemas) await dropSchema(schema);
  });
  runSharedConformance('postgres', {
    namespace: async () => {
      const schema = freshSchema('shared');
      sharedSchemas.push(schema);
      return { url: storeUrl(schema), storeOptions: {} };
    },
    takeoverMs: 6_000,
    // NOTIFY needs no privilege: any role that can log in may send on any channel.
    send: async (space, channel, message) => {
      const schema = new URL(space.url).searchParams.get('schema')!;
      await withClient((client) => client.query('SELECT pg_notify($1, $2)', [`delayq:${schema}:${channel}`, message])).catch((error: unknown) => {
        // Only what NOTIFY itself refuses (a payload of 8,000 bytes or more).
        if (!/payload string too long/.test(String(error))) throw error;
      });
    },
  });
});

describe('postgres store', () => {
  const schemas: string[] = [];
  const schemaOfTest = (): string => {
    const schema = freshSchema('dq');
    schemas.push(schema);
    return schema;
  };
  after(async () => {
    for (const schema of schemas) await dropSchema(schema);
  });

  it('stats come from counter rows moved by every write, summed over the slots of the processes that wrote', async () => {
    const schema = schemaOfTest();
    const a = await openPostgresStore(storeUrl(schema), { clock: storeSystemClock });
    await a.tasks.schedule([task('x', { runAt: 1 }), task('y', { runAt: 1 })], 1);
    await a.close();
    // Another process's slot: the counters of a's writes are moved by b's.
    await withClient((c) => c.query(`UPDATE "${schema}".task_counts SET slot = slot + 1000`));
    const b = await openPostgresStore(storeUrl(schema), { clock: storeSystemClock });
    try {
      const [reserved] = await b.tasks.reserve(['x'], 2);
      assert.equal((await b.tasks.ack('x', reserved!.receipt!, 3)).status, 'acked');
      const stats = await b.tasks.stats();
      assert.deepEqual(stats.byState, { pending: 1, reserved: 0, completed: 1, dead: 0, cancelled: 0 });
      // The old slot, and b's slots of reservations and of acks (kinds 1 and 2 of its base, whichever it was at the time).
      const rows = await withClient((c) => c.query<{ slot: number }>(`SELECT DISTINCT slot FROM "${schema}".task_counts WHERE n <> 0 ORDER BY slot`));
      const slots = rows.rows.map((r) => r.slot);
      assert.deepEqual(slots.filter((slot) => slot >= 1000).length, 1, 'the old slot');
      assert.deepEqual([...new Set(slots.filter((slot) => slot < 1000).map((slot) => slot % 3))].sort(), [1, 2], "b's slots of reservations and of acks");
    } finally {
      await b.close();
    }
  });

  it("a process's counter rows move to the next base every COUNTER_ROTATE_MS, the same shift for every process (ADR 0055)", async () => {
    const schema = schemaOfTest();
    // In the middle of a rotation window, whatever the time.
    let offset = COUNTER_ROTATE_MS / 2 - (Date.now() % COUNTER_ROTATE_MS);
    const clock = { ...storeSystemClock, now: () => Date.now() + offset };
    const a = await openPostgresStore(storeUrl(schema), { clock });
    const b = await openPostgresStore(storeUrl(schema), { clock });
    // A schedule writes kind 0 of its process's base: the base of each topic's rows, by time.
    const bases = async (): Promise<Map<string, number[]>> => {
      const rows = await withClient((c) => c.query<{ slot: number; topic: string }>(`SELECT slot, topic FROM "${schema}".task_counts WHERE n <> 0 ORDER BY slot`));
      const byTopic = new Map<string, number[]>();
      for (const { slot, topic } of rows.rows) byTopic.set(topic, [...(byTopic.get(topic) ?? []), slot / 3]);
      return byTopic;
    };
    try {
      await a.tasks.schedule([task('a-1', { topic: 'ta', runAt: 1 })], 1);
      await b.tasks.schedule([task('b-1', { topic: 'tb', runAt: 1 })], 1);
      const before = await bases();
      offset += COUNTER_ROTATE_MS;
      await a.tasks.schedule([task('a-2', { topic: 'ta', runAt: 1 })], 1);
      await b.tasks.schedule([task('b-2', { topic: 'tb', runAt: 1 })], 1);
      const after = await bases();
      for (const topic of ['ta', 'tb']) {
        const [was] = before.get(topic)!;
        assert.ok(was !== undefined && Number.isInteger(was));
        assert.deepEqual(new Set(after.get(topic)), new Set([was, (was + 1) % COUNTER_SLOTS]), topic);
      }
      assert.equal((await a.tasks.stats()).byState.pending, 4);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('concurrent single schedules share statements (group commit) and each answers for itself', async () => {
    const schema = schemaOfTest();
    const store = (await openPostgresStore(storeUrl(schema), { clock: storeSystemClock })) as PostgresStore;
    try {
      const before = store.sent;
      const outcomes = await Promise.all(Array.from({ length: 500 }, (_, i) => store.tasks.schedule([task(`g-${i % 400}`, { runAt: 10 + i })], 5)));
      assert.equal(outcomes.filter(([o]) => o!.created).length, 400);
      // A repeated id answers with the first call's runAt.
      assert.deepEqual(outcomes[450]![0], { id: 'g-50', runAt: 60, created: false, ref: null });
      // Coalesced while one statement is in flight: far fewer statements than calls.
      assert.ok(store.sent - before < 100, `${store.sent - before} statements for 500 calls`);
      const acks = await Promise.all(['g-1', 'g-2', 'nope'].map((id) => store.tasks.ack(id, '1.x', 6)));
      assert.deepEqual(acks.map((a) => a.status), ['stale', 'stale', 'not_found']);
      assert.equal((await store.tasks.stats()).byState.pending, 400);
    } finally {
      await store.close();
    }
  });

  it('a schedule call larger than one statement still commits whole or not at all', async () => {
    const schema = schemaOfTest();
    const store = await openPostgresStore(storeUrl(schema), { clock: storeSystemClock });
    try {
      const tasks = Array.from({ length: 4_500 }, (_, i) => task(`big-${i}`, { runAt: 10 + i }));
      // The last statement's rows break the table's CHECK (runAt >= 0): the first statements' rows must go too.
      const broken = [...tasks.slice(0, 4_400), task('big-bad', { runAt: -1 }), ...tasks.slice(4_400)];
      await assert.rejects(() => store.tasks.schedule(broken, 1), (e: unknown) => isDelayQError(e, 'STORE_UNAVAILABLE'));
      assert.equal(await store.tasks.get('big-0'), null);
      assert.equal((await store.tasks.stats()).byState.pending, 0);
      const outcomes = await store.tasks.schedule([...tasks, task('big-0', { runAt: 99 })], 1);
      assert.equal(outcomes.filter((o) => o.created).length, 4_500);
      assert.deepEqual(outcomes.at(-1), { id: 'big-0', runAt: 10, created: false, ref: null }, 'a repeated id in a later statement: the first wins');
      assert.equal((await store.tasks.stats()).byState.pending, 4_500);
    } finally {
      await store.close();
    }
  });

  it('loadDue is a range scan of the (due_at, seq) index', async () => {
    const schema = schemaOfTest();
    const store = await openPostgresStore(storeUrl(schema), { clock: storeSystemClock });
    try {
      await store.tasks.schedule(Array.from({ length: 2_000 }, (_, i) => task(`d-${i}`, { runAt: 1_000 + i })), 1);
      const plan = await withClient(async (c) => {
        await c.query(`ANALYZE "${schema}".tasks`);
        await c.query('SET enable_seqscan = off');
        const r = await c.query(`EXPLAIN SELECT id FROM "${schema}".tasks WHERE due_at IS NOT NULL AND due_at < 1500 ORDER BY due_at, seq LIMIT 100`);
        return r.rows.map((row: Record<string, string>) => row['QUERY PLAN']).join('\n');
      });
      assert.match(plan, /Index Scan using tasks_due/);
      assert.doesNotMatch(plan, /Sort/);
    } finally {
      await store.close();
    }
  });

  it('carries no session state: no startup options, no prepared statements; an ack, reserve or cancel of 16 or more sets its planner cost in its own transaction (ADR 0053)', async () => {
    const schema = schemaOfTest();
    const store = (await openPostgresStore(storeUrl(schema), { clock: storeSystemClock })) as PostgresStore;
    const quiet = (): void => undefined;
    const pool = createPool(PG_URL, { debug: quiet, info: quiet, warn: quiet, error: quiet });
    const pg = new PgContext(pool, schema, 0, 16, 'test');
    try {
      // The server's own settings, whatever connection a statement lands on (pgbouncer may hand it any).
      const [settings] = await pg.query<{ plan_cache_mode: string; random_page_cost: string }>(`SELECT current_setting('plan_cache_mode') AS plan_cache_mode, current_setting('random_page_cost') AS random_page_cost`, []);
      const server = await withClient((c) => c.query<{ random_page_cost: string }>(`SELECT current_setting('random_page_cost') AS random_page_cost`));
      assert.deepEqual(settings, { plan_cache_mode: 'auto', random_page_cost: server.rows[0]?.random_page_cost });
      const cost = async (items: number): Promise<string> => (await pg.planned<{ v: string }>(items, `SELECT current_setting('random_page_cost') AS v`, []))[0]!.v;
      assert.equal(await cost(PLANNED_FROM), '1.1');
      assert.equal(await cost(PLANNED_FROM - 1), server.rows[0]?.random_page_cost, 'a few rows: one statement, alone');
      assert.equal(await cost(1), server.rows[0]?.random_page_cost);
      // The store's own traffic left no prepared statement on the connections it used.
      await store.tasks.schedule([task('p', { runAt: 1 })], 1);
      await store.tasks.reserve(['p'], 2);
      const prepared = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements');
      assert.equal(prepared.rows[0]?.n, 0);
    } finally {
      await pool.end();
      await store.close();
    }
  });

  it('an ack of 200 over 10,000 tasks probes the primary key, with the planner cost its transaction sets (ADR 0048, 0053); a reserve of due tasks too, whatever the cost (migration 0011)', async () => {
    const schema = schemaOfTest();
    const store = await openPostgresStore(storeUrl(schema), { clock: storeSystemClock });
    try {
      const at = Date.now() - 1_000;
      for (let from = 0; from < 10_000; from += 1_000)
        await store.tasks.schedule(Array.from({ length: 1_000 }, (_, i) => ({ id: `t-${from + i}`, topic: 't', payload: 'null', runAt: at, maxAttempts: 3, ttrMs: 1_000, backoff: { baseMs: 1, factor: 1, maxMs: 1, jitter: 0 } })), Date.now());
      const plans = await withClient(async (c) => {
        await c.query(`ANALYZE "${schema}".tasks`);
        const explain = async (text: string, values: unknown[]): Promise<string> => (await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, values)).rows.map((r) => r['QUERY PLAN']).join('\n');
        const ids = `{${Array.from({ length: 200 }, (_, i) => `t-${i * 50}`).join(',')}}`;
        const ack = forSchema(statement('ack'), schema);
        const ackValues = [ids, ids, `{${Date.now()}}`, 2];
        const defaultCost = await explain(ack, ackValues);
        await c.query('BEGIN; SET LOCAL random_page_cost = 1.1');
        const planned = await explain(ack, ackValues);
        await c.query('ROLLBACK');
        const reserveDue = await explain(forSchema(statement('reserve-due'), schema), ['t', Date.now(), 'n', null, 1, 1, -1, -1, false]);
        return { defaultCost, planned, reserveDue };
      });
      assert.match(plans.defaultCost, /Seq Scan on tasks/, 'the setting matters: without it the planner reads the table');
      assert.match(plans.planned, /tasks_pkey/, plans.planned);
      assert.doesNotMatch(plans.planned, /Seq Scan on tasks/, plans.planned);
      assert.match(plans.reserveDue, /tasks_pkey/, plans.reserveDue);
      assert.doesNotMatch(plans.reserveDue, /Seq Scan on tasks/, plans.reserveDue);
    } finally {
      await store.close();
    }
    // reserve_pick leaves the planner no bitmap or sequential scan, nor a sort: the walk stops once it has enough.
    const config = await withClient((c) => c.query(`SELECT proconfig, prorows FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname = 'reserve_pick'`, [schema]));
    const row = config.rows[0] as { proconfig: string[]; prorows: number } | undefined;
    assert.deepEqual([...(row?.proconfig ?? [])].sort(), ['enable_bitmapscan=off', 'enable_seqscan=off', 'enable_sort=off']);
    assert.equal(row?.prorows, 1);
  });

  it('refuses unknown URL parameters, bad schema names, bad call timeouts and a schema given twice differently', async () => {
    for (const spec of [`${storeUrl('ok')}&shards=3`, 'postgres://postgres@127.0.0.1:5432/test?schema=Bad-Name', 'postgres://127.0.0.1:5432', 'postgres://postgres@127.0.0.1:5432/test?schema=1x', ...['-1', '50', '1.5', 'x', '3600001'].map((ms) => `${storeUrl('ok')}&callTimeoutMs=${ms}`)])
      await assert.rejects(() => openPostgresStore(spec, { clock: storeSystemClock }), (e: unknown) => isDelayQError(e, 'INVALID_STORE_URL'), spec);
    await assert.rejects(() => openPostgresStore(storeUrl('a_one'), { clock: storeSystemClock, schema: 'a_two' }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
    // callTimeoutMs in code: the same rule, and the URL's must agree.
    for (const callTimeoutMs of [50, 1.5, 3_600_001])
      await assert.rejects(() => openPostgresStore(storeUrl('ok'), { clock: storeSystemClock, callTimeoutMs }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION') && /callTimeoutMs/.test(e.message));
    await assert.rejects(() => openPostgresStore(`${storeUrl('ok')}&callTimeoutMs=2000`, { clock: storeSystemClock, callTimeoutMs: 3_000 }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
  });

  it('refuses a schema migrated by a newer delayq (SCHEMA_OUTDATED), and leaves it as it was', async () => {
    const schema = schemaOfTest();
    await (await openPostgresStore(storeUrl(schema), { clock: storeSystemClock })).close();
    await withClient((c) => c.query(`UPDATE "${schema}".meta SET value = '999' WHERE key = 'schema_version'`));
    await assert.rejects(
      () => openPostgresStore(storeUrl(schema), { clock: storeSystemClock }),
      (e: unknown) => isDelayQError(e, 'SCHEMA_OUTDATED') && /newer delayq/.test(e.message),
    );
    const version = await withClient((c) => c.query(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`));
    assert.equal((version.rows[0] as { value: string }).value, '999');
  });

  it("refuses a schema that is not delayq's, and writes nothing into it", async () => {
    const schema = schemaOfTest();
    await withClient(async (c) => {
      await c.query(`CREATE SCHEMA "${schema}"`);
      await c.query(`CREATE TABLE "${schema}".orders (id int)`);
    });
    await assert.rejects(
      () => openPostgresStore(storeUrl(schema), { clock: storeSystemClock }),
      (e: unknown) => isDelayQError(e, 'STORE_INCOMPATIBLE') && /not delayq's/.test(e.message),
    );
    const tables = await withClient((c) => c.query(`SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE nspname = $1`, [schema]));
    assert.deepEqual(tables.rows.map((r: { relname: string }) => r.relname), ['orders']);
  });

  it('takes an empty schema that exists (created ahead by an administrator)', async () => {
    const schema = schemaOfTest();
    await withClient((c) => c.query(`CREATE SCHEMA "${schema}"`));
    const store = await openPostgresStore(storeUrl(schema), { clock: storeSystemClock });
    await store.close();
  });

  it('stores opening a new schema at once migrate it once, and share it', async () => {
    const schema = schemaOfTest();
    const stores = await Promise.all(Array.from({ length: 4 }, () => openPostgresStore(storeUrl(schema), { clock: storeSystemClock })));
    try {
      await stores[0]!.tasks.schedule([task('m')], 1);
      assert.equal((await stores[3]!.tasks.get('m'))?.state, 'pending');
      const version = await withClient((c) => c.query(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`));
      assert.equal((version.rows[0] as { value: string }).value, String(SCHEMA_VERSION));
    } finally {
      for (const store of stores) await store.close();
    }
  });

  it("a lane's reserves start after the last task they took, not from the beginning of every lane's due tasks; a promotion moves them back", async () => {
    const schema = schemaOfTest();
    // Started: it owns every shard, so its promotions are announced.
    const store = (await openPostgresStore(storeUrl(schema), { clock: storeSystemClock })) as PostgresStore;
    const signal = AbortSignal.timeout(20_000);
    try {
      let now = 10_000;
      const reserve = async (): Promise<string[]> => (await store.coordination.reserveReady('b', 10, () => now, undefined, signal)).map((t) => t.id);
      // Another lane's due backlog, then b's task after it in due order.
      await store.tasks.schedule(Array.from({ length: 200 }, (_, i) => task(`a-${i}`, { topic: 'a', runAt: 1_000 })), 1);
      await store.tasks.schedule([task('b-1', { topic: 'b', runAt: 2_000 })], 1);
      await store.coordination.promote([{ id: 'b-1', topic: 'b', kind: 'run', dueAt: 2_000, seq: 0, receipt: null }], now);
      assert.deepEqual(await reserve(), ['b-1']);
      // Due before the cursor and not promoted yet: the next statement starts after b-1, so it
      // does not see it (before, a short answer sent the next statement back to the beginning).
      const [late] = await store.tasks.schedule([task('b-late', { topic: 'b', runAt: 1_500 })], 1);
      const found = await store.coordination.reserveReady('b', 10, () => now, undefined, AbortSignal.timeout(300));
      assert.deepEqual(found, []);
      // Its promotion moves the lane's cursor back before it.
      await store.coordination.promote([late!.ref!], now);
      assert.deepEqual(await reserve(), ['b-late']);
      // The safety net: one without a promotion is found once FULL_WALK_MS has passed.
      await store.tasks.schedule([task('b-lost', { topic: 'b', runAt: 1_200 })], 1);
      now += FULL_WALK_MS;
      await store.coordination.promote([{ id: 'b-x', topic: 'b', kind: 'run', dueAt: now, seq: Number.MAX_SAFE_INTEGER, receipt: null }], now);
      assert.deepEqual(await reserve(), ['b-lost']);
      assert.deepEqual(parsePgReadyNotice('~push:b 1200 42'), { lane: '~push:b', from: { dueAt: 1_200, seq: 42 } });
      assert.deepEqual(parsePgReadyNotice('b'), { lane: 'b' });
    } finally {
      await store.close();
    }
  });

  it("a lane's safety net reads its floor, not the beginning: a task skipped while another transaction held it locked is taken once free, within FLOOR_SWEEP_MS; one left behind the floor unannounced waits for FULL_WALK_MS (ADR 0055)", async () => {
    const schema = schemaOfTest();
    const store = (await openPostgresStore(storeUrl(schema), { clock: storeSystemClock })) as PostgresStore;
    const locker = new pg.Client({ connectionString: PG_URL });
    await locker.connect();
    const signal = AbortSignal.timeout(20_000);
    try {
      let now = 10_000;
      const reserve = async (waitMs?: number): Promise<string[]> =>
        (await store.coordination.reserveReady('c', 10, () => now, undefined, waitMs === undefined ? signal : AbortSignal.timeout(waitMs))).map((t) => t.id);
      await store.tasks.schedule([task('c-1', { topic: 'c', runAt: 1_000 })], 1);
      assert.deepEqual(await reserve(), ['c-1']);
      // After the cursor (no promotion needed), c-2 held locked by another transaction while the lane's statement passes it.
      await store.tasks.schedule([task('c-2', { topic: 'c', runAt: 1_100 }), task('c-3', { topic: 'c', runAt: 1_200 })], 1);
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM "${schema}".tasks WHERE id = 'c-2' FOR UPDATE`);
      assert.deepEqual(await reserve(), ['c-3']);
      // Let go, still pending, behind the cursor: the next statements do not see it...
      await locker.query('ROLLBACK');
      assert.deepEqual(await reserve(300), []);
      // ... until the floor is read: it was pending (locked or not), so the cursor moves back before it.
      now += FLOOR_SWEEP_MS;
      assert.deepEqual(await reserve(), ['c-2']);
      // The next read starts from that floor and finds nothing pending after it.
      now += FLOOR_SWEEP_MS;
      assert.deepEqual(await reserve(300), []);
      // Due behind the floor and never promoted (a notice lost with the listener connected): the
      // floor's reads pass it; the read from the beginning every FULL_WALK_MS does not.
      await store.tasks.schedule([task('c-lost', { topic: 'c', runAt: 1_050 })], 1);
      now += FLOOR_SWEEP_MS;
      assert.deepEqual(await reserve(500), []);
      now += FULL_WALK_MS;
      assert.deepEqual(await reserve(), ['c-lost']);
    } finally {
      await locker.end();
      await store.close();
    }
  });

  it('a task of the default policy keeps NULLs for it, and every read and write takes them for the policy (0009)', async () => {
    const schema = schemaOfTest();
    const store = await openPostgresStore(storeUrl(schema), { clock: storeSystemClock });
    try {
      const usual = { maxAttempts: DEFAULT_TASK_DEFAULTS.maxAttempts, ttrMs: DEFAULT_TASK_DEFAULTS.ttrMs, backoff: DEFAULT_BACKOFF };
      const own = { maxAttempts: 3, ttrMs: 5_000, backoff: { ...DEFAULT_BACKOFF, jitter: 0 } };
      // One batch mixing both, the own policy first: a NULL must not take the first task's value.
      await store.tasks.schedule([task('own', { runAt: 1_000, ...own }), task('usual', { runAt: 1_000, ...usual })], 500);
      await store.tasks.schedule([task('usual-2', { runAt: 1_000, ...usual }), task('usual-3', { runAt: 1_000, ...usual })], 500);
      const raw = await withClient((c) =>
        c.query(`SELECT id, attempts, max_attempts, ttr_ms, backoff_base_ms, backoff_factor, backoff_max_ms, backoff_jitter, updated_at FROM "${schema}".tasks ORDER BY id`),
      );
      const nulls = (row: Record<string, unknown>): string[] => Object.keys(row).filter((k) => row[k] === null);
      const all = ['attempts', 'max_attempts', 'ttr_ms', 'backoff_base_ms', 'backoff_factor', 'backoff_max_ms', 'backoff_jitter', 'updated_at'];
      assert.deepEqual(raw.rows.map(nulls), [
        ['attempts', 'backoff_base_ms', 'backoff_factor', 'backoff_max_ms', 'updated_at'],
        all,
        all,
        all,
      ]);
      for (const [id, policy] of [['own', own], ['usual', usual], ['usual-3', usual]] as const) {
        const record = await store.tasks.get(id);
        assert.deepEqual(
          { maxAttempts: record?.maxAttempts, ttrMs: record?.ttrMs, backoff: record?.backoff, attempts: record?.attempts, updatedAt: record?.updatedAt },
          { ...policy, attempts: 0, updatedAt: 500 },
          id,
        );
      }
      // The reservation takes the stored default ttr, counts the first attempt, and the nack
      // retries by the default backoff, its history entry dated by the reservation.
      const [reserved] = await store.tasks.reserve(['usual'], 2_000);
      assert.deepEqual([reserved?.attempts, reserved?.maxAttempts, reserved?.reservedUntil, reserved?.receipt?.startsWith('1.')], [1, 5, 32_000, true]);
      const nacked = await store.tasks.nack({ id: 'usual', receipt: reserved?.receipt ?? '', now: 2_100, random: 0.5 });
      assert.equal(nacked.status, 'retrying');
      const after = await store.tasks.get('usual');
      assert.equal(after?.runAt, 2_100 + backoffDelay(DEFAULT_BACKOFF, 1, () => 0.5));
      assert.deepEqual(after?.history, [{ attempt: 1, startedAt: 2_000, durationMs: 100, outcome: 'nacked', error: null }]);
      // From SQL: the default policy, stored as NULLs.
      await withClient((c) => c.query(`SELECT "${schema}".schedule('from-sql', 'orders', '{}'::jsonb, now())`));
      const fromSql = await store.tasks.get('from-sql');
      assert.deepEqual([fromSql?.maxAttempts, fromSql?.ttrMs, fromSql?.backoff, fromSql?.attempts, fromSql?.updatedAt === fromSql?.createdAt], [5, 30_000, DEFAULT_BACKOFF, 0, true]);
      const sqlRow = await withClient((c) => c.query(`SELECT max_attempts, backoff_jitter, updated_at FROM "${schema}".tasks WHERE id = 'from-sql'`));
      assert.deepEqual(sqlRow.rows[0], { max_attempts: null, backoff_jitter: null, updated_at: null });
    } finally {
      await store.close();
    }
  });

  it('a schema of version 4 (before attempt history) migrates to the latest: its tasks read an empty history and append to it', async () => {
    const schema = schemaOfTest();
    const first = await openPostgresStore(storeUrl(schema), { clock: storeSystemClock });
    await first.tasks.schedule([task('old', { runAt: 1_000 })], 1);
    const receipt = (await first.tasks.reserve(['old'], 2_000))[0]?.receipt;
    assert.ok(receipt);
    await first.close();
    // Back to exactly version 4: without the column 0005 adds, with what 0006 dropped and changed, without what 0007, 0008, 0013, 0014, 0015, 0016 and 0017 add,
    // and with 0009's NULLs filled in, its columns NOT NULL again and 0003's functions (0010's gone).
    await withClient(async (c) => {
      await c.query(
        `UPDATE "${schema}".tasks SET attempts = coalesce(attempts, 0), max_attempts = coalesce(max_attempts, 5), ttr_ms = coalesce(ttr_ms, 30000),
                backoff_base_ms = coalesce(backoff_base_ms, 1000), backoff_factor = coalesce(backoff_factor, 2), backoff_max_ms = coalesce(backoff_max_ms, 3600000),
                backoff_jitter = coalesce(backoff_jitter, 0.2), updated_at = coalesce(updated_at, created_at)`,
      );
      const columns = ['attempts', 'max_attempts', 'ttr_ms', 'backoff_base_ms', 'backoff_factor', 'backoff_max_ms', 'backoff_jitter', 'updated_at'];
      await c.query(`ALTER TABLE "${schema}".tasks ${columns.map((col) => `ALTER COLUMN ${col} SET NOT NULL`).join(', ')}`);
      await c.query(`DROP FUNCTION "${schema}".schedule, "${schema}".cancel, "${schema}".reschedule, "${schema}".check_name, "${schema}".run_at_ms, "${schema}".payload_text`);
      await c.query(forSchema(loadMigrations().find((m) => m.version === 3)!.sql, schema));
      await c.query(`ALTER TABLE "${schema}".tasks DROP COLUMN history, DROP COLUMN trace, DROP COLUMN priority`);
      await c.query(
        `ALTER TABLE "${schema}".tasks SET (fillfactor = 80), ADD COLUMN lane text GENERATED ALWAYS AS (CASE WHEN url IS NULL OR url = '' THEN topic ELSE '~push' END) STORED`,
      );
      await c.query(`ALTER TABLE "${schema}".members DROP COLUMN joined_at`);
      await c.query(`DROP TABLE "${schema}".topic_limits, "${schema}".flow_buckets, "${schema}".flow_slots, "${schema}".task_events`);
      await c.query(`DROP FUNCTION "${schema}".flow_admit, "${schema}".flow_bind, "${schema}".reserve_pick, "${schema}".due_floor, "${schema}".reserve_pick_ranked`);
      await c.query(`DELETE FROM "${schema}".meta WHERE key = 'limits_version'`);
      await c.query(`UPDATE "${schema}".meta SET value = '4' WHERE key = 'schema_version'`);
    });
    const store = await openPostgresStore(storeUrl(schema), { clock: storeSystemClock });
    try {
      assert.deepEqual((await store.tasks.get('old'))?.history, []);
      assert.deepEqual([(await store.tasks.get('old'))?.maxAttempts, (await store.tasks.get('old'))?.ttrMs], [3, 5_000]);
      const created = await withClient((c) => c.query<{ schedule: boolean }>(`SELECT "${schema}".schedule('new', 'orders', '{}'::jsonb, now())`));
      assert.equal(created.rows[0]?.schedule, true);
      assert.equal((await store.tasks.get('new'))?.maxAttempts, 5);
      assert.equal((await store.tasks.ack('old', receipt, 2_050)).status, 'acked');
      assert.deepEqual((await store.tasks.get('old'))?.history, [{ attempt: 1, startedAt: 2_000, durationMs: 50, outcome: 'acked', error: null }]);
      const version = await withClient((c) => c.query(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`));
      assert.equal((version.rows[0] as { value: string }).value, String(SCHEMA_VERSION));
    } finally {
      await store.close();
    }
  });

  it("shard_of in SQL is the router's shardOf, so SQL and TypeScript put a task in the same shard", async () => {
    const schema = schemaOfTest();
    await (await openPostgresStore(storeUrl(schema), { clock: storeSystemClock })).close();
    const ids = ['a', 'order-1', 'x:y.z-9', 'ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ', '01JD8X3ZP7R8K4S2M9Q6T5V1WB'];
    const rows = await withClient((c) => c.query(`SELECT "${schema}".shard_of(id, 16) AS s FROM unnest($1::text[]) WITH ORDINALITY AS i(id, ord) ORDER BY ord`, [ids]));
    assert.deepEqual(
      rows.rows.map((r: { s: number }) => r.s),
      ids.map((id) => shardOf(id, 16)),
    );
  });

  it('an unreachable server, a missing database and a refused user are one clear STORE_UNAVAILABLE each, and write nothing', async () => {
    const cases: [string, RegExp][] = [
      ['postgres://postgres@127.0.0.1:1/test', /ECONNREFUSED/],
      [pgUrlWith({ database: 'no_such_database_here' }), /no such database/],
      [pgUrlWith({ user: 'no_such_role_here' }), /refused the user|no such role|role/],
    ];
    for (const [spec, why] of cases)
      await assert.rejects(
        () => openPostgresStore(spec, { clock: storeSystemClock }),
        (e: unknown) => isDelayQError(e, 'STORE_UNAVAILABLE') && why.test(e.message) && !e.message.includes('undefined'),
        spec,
      );
    const found = await withClient((c) => c.query(`SELECT 1 FROM pg_namespace WHERE nspname = 'delayq' AND false`));
    assert.equal(found.rowCount, 0);
  });
});
