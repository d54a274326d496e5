/**
 * The PostgreSQL store through a real pgbouncer in transaction mode (Debian's, started by
 * test/helpers/pgbouncer.ts on a free port of its own). Before issue 47, pgbouncer refused
 * delayq's connections ("unsupported startup parameter: options"), and with that parameter
 * ignored, LISTEN was lost and tasks scheduled from SQL fired 12-14 s late.
 *
 * - the store conformance suite, every call through pgbouncer, the LISTEN connection direct
 *   (`listenUrl`): no startup parameter, no prepared statement, no session state;
 * - lateness: tasks scheduled through pgbouncer by one process and from SQL on a direct
 *   connection, delivered by two processes through pgbouncer with listenUrl: p99 <= 100 ms;
 * - without listenUrl: the store finds that notices do not arrive, says so in its log, polls
 *   every POLL_MS, and a task scheduled from SQL still fires within a poll;
 * - poolSize bounds the connections; listenUrl is checked and never logged with its password.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { after, before, describe, it } from 'node:test';
import { isDelayQError } from '../../../src/core/errors.js';
import type { Logger } from '../../../src/core/ports/index.js';
import { DelayQueue } from '../../../src/index.js';
import { openPostgresStore } from '../../../src/stores/postgres/index.js';
import type { PostgresStore } from '../../../src/stores/postgres/postgres-store.js';
import { PROBE_MS } from '../../../src/stores/postgres/listener.js';
import { POLL_MS } from '../../../src/stores/postgres/shared.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { runStoreConformance } from '../../../src/testing/store-conformance/index.js';
import { startPgbouncer, type Pgbouncer } from '../../helpers/pgbouncer.js';
import { dropSchema, freshSchema, PG_URL, storeUrl, withClient } from '../../helpers/postgres.js';

let bouncer: Pgbouncer;
before(async () => {
  bouncer = await startPgbouncer();
});
after(async () => {
  await bouncer.stop();
});

/** A store URL through pgbouncer for `schema`, its LISTEN connection direct. */
const viaBouncer = (schema: string, query: Record<string, string> = {}): string => bouncer.url({ schema, listenUrl: PG_URL, ...query });

describe('pgbouncer in transaction mode', () => {
  it('refuses the startup parameter delayq used to send: the store sends none (issue 47)', async () => {
    const client = new pg.Client({ connectionString: bouncer.url(), options: '-c plan_cache_mode=force_custom_plan' });
    await assert.rejects(() => client.connect(), /unsupported startup parameter: options/);
    await client.end().catch(() => undefined);
    const schema = freshSchema('bouncer');
    try {
      const store = await openPostgresStore(bouncer.url({ schema }), { clock: storeSystemClock });
      await store.close();
    } finally {
      await dropSchema(schema);
    }
  });
});

// Every case of the suite through pgbouncer: a named prepared statement would fail there
// (pgbouncer 1.18 hands the next use to another server connection), session settings would
// be lost, and migrations run in one transaction.
runStoreConformance('postgres through pgbouncer (transaction mode)', async () => {
  const schema = freshSchema('pgb');
  const store = await openPostgresStore(viaBouncer(schema), { clock: storeSystemClock });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await dropSchema(schema);
    },
  };
});

describe('postgres store through pgbouncer', () => {
  const schemas: string[] = [];
  after(async () => {
    for (const schema of schemas) await dropSchema(schema);
  });
  const schemaOfTest = (): string => {
    const schema = freshSchema('pgb');
    schemas.push(schema);
    return schema;
  };

  it('with listenUrl: tasks scheduled through pgbouncer and from SQL on a direct connection fire on time, p99 <= 100 ms, none early, none twice', async (t) => {
    const schema = schemaOfTest();
    // Two processes through pgbouncer: each owns half the shards, so most timers cross between them by NOTIFY.
    const stores = [(await openPostgresStore(viaBouncer(schema), { clock: storeSystemClock })) as PostgresStore, (await openPostgresStore(viaBouncer(schema), { clock: storeSystemClock })) as PostgresStore];
    const queues = stores.map((store) => DelayQueue.start(store));
    const lateness = new Map<string, number>();
    const twice: string[] = [];
    for (const queue of queues)
      queue.work('due', (delivery) => {
        if (lateness.has(delivery.id)) twice.push(delivery.id);
        lateness.set(delivery.id, Date.now() - delivery.runAt);
      }, { concurrency: 50 });
    const direct = new pg.Client({ connectionString: PG_URL });
    await direct.connect();
    try {
      // The second takes its half at the first's next lease tick: schedule once both hold theirs.
      const handover = Date.now() + 10_000;
      while (stores.some((store) => store.coordination.leases.size !== 8) && Date.now() < handover) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(stores.map((store) => store.coordination.leases.size), [8, 8]);
      // The host's own timer lateness over the same window (this process's event loop, on a
      // machine shared with other work): what any timer here suffers, delayq's included.
      const hostLate: number[] = [];
      let expected = Date.now() + 10;
      const probe = setInterval(() => {
        hostLate.push(Math.max(0, Date.now() - expected));
        expected = Date.now() + 10;
      }, 10);
      const count = 300;
      for (let i = 0; i < count; i++) {
        const delay = 500 + Math.floor((i / count) * 3_000);
        if (i % 2 === 0) await queues[0]!.schedule({ id: `bq-${i}`, topic: 'due', payload: i, delayMs: delay });
        else await direct.query(`SELECT "${schema}".schedule($1, 'due', $2::jsonb, now() + make_interval(secs => $3::float8 / 1000))`, [`bq-${i}`, String(i), delay]);
      }
      const until = Date.now() + 15_000;
      while (lateness.size < count && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      clearInterval(probe);
      const host = hostLate.sort((a, b) => a - b)[Math.ceil(hostLate.length * 0.99) - 1] ?? 0;
      const values = [...lateness.values()].sort((a, b) => a - b);
      assert.equal(values.length, count, `delivered ${values.length} of ${count}`);
      assert.deepEqual(twice, []);
      assert.ok(values[0]! >= 0, `none early (earliest ${values[0]} ms)`);
      const p99 = values[Math.ceil(values.length * 0.99) - 1]!;
      const p50 = values[Math.floor(values.length / 2)]!;
      t.diagnostic(`lateness p50 ${p50} ms, p99 ${p99} ms, max ${values.at(-1)} ms over ${values.length} tasks; the host's own 10 ms timer, p99 ${host} ms late`);
      // 100 ms of its own at p99, beyond what the loaded host does to every timer of this process.
      assert.ok(p99 <= 100 + host, `lateness p50 ${p50} ms, p99 ${p99} ms, max ${values.at(-1)} ms (host timer p99 ${host} ms)`);
    } finally {
      await direct.end();
      for (const queue of queues) await queue.close();
    }
  });

  it('without listenUrl: finds that notices do not arrive, says so, and polls: a task scheduled from SQL still fires within a poll', async (t) => {
    const schema = schemaOfTest();
    const warnings: string[] = [];
    const note = (): void => undefined;
    const logger: Logger = { debug: note, info: note, error: note, warn: (_fields, message) => void warnings.push(message ?? '') };
    const queue = await DelayQueue.open({ store: bouncer.url({ schema }), logger });
    const fired = new Map<string, number>();
    queue.work('sql', (delivery) => void fired.set(delivery.id, Date.now()));
    try {
      const until = Date.now() + PROBE_MS + 3_000;
      while (!warnings.some((w) => /notifications do not reach the LISTEN connection/.test(w)) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      assert.ok(warnings.some((w) => w.includes(`poll every ${POLL_MS} ms`)), `warned: ${JSON.stringify(warnings)}`);
      await withClient((c) => c.query(`SELECT "${schema}".schedule('from-sql', 'sql', '1', now() + interval '300 milliseconds')`));
      const runAt = (await queue.get('from-sql'))!.runAt;
      const deadline = Date.now() + 5_000;
      while (!fired.has('from-sql') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const late = fired.get('from-sql')! - runAt;
      t.diagnostic(`polling: fired ${late} ms after runAt`);
      assert.ok(late >= 0 && late <= POLL_MS + 500, `fired ${late} ms after runAt (polling every ${POLL_MS} ms)`);
    } finally {
      await queue.close();
    }
  });

  it('poolSize bounds the connections of a process; listenUrl is checked, must agree with storeOptions, and keeps its password out of messages', async () => {
    const schema = schemaOfTest();
    const name = `dq_pool_${schema}`;
    const direct = `${storeUrl(schema)}&application_name=${name}&poolSize=2`;
    const store = await openPostgresStore(direct, { clock: storeSystemClock });
    try {
      await Promise.all(Array.from({ length: 40 }, (_, i) => store.tasks.get(`x-${i}`)));
      const rows = await withClient((c) => c.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1`, [name]));
      // The pool's two and the LISTEN connection (which takes the URL's application_name too).
      assert.ok(rows.rows[0]!.n <= 3, `${rows.rows[0]!.n} connections`);
    } finally {
      await store.close();
    }
    const secret = encodeURIComponent('postgres://postgres:s3cret@127.0.0.1:5432/test');
    for (const [spec, code] of [
      [`${storeUrl(schema)}&poolSize=0`, 'INVALID_STORE_URL'],
      [`${storeUrl(schema)}&poolSize=101`, 'INVALID_STORE_URL'],
      [`${storeUrl(schema)}&listenUrl=${encodeURIComponent('redis://127.0.0.1:6379')}`, 'INVALID_STORE_URL'],
      [`${storeUrl(schema)}&listenUrl=${encodeURIComponent(`${PG_URL}?schema=x`)}`, 'INVALID_STORE_URL'],
    ] as const)
      await assert.rejects(() => openPostgresStore(spec, { clock: storeSystemClock }), (e: unknown) => isDelayQError(e, code), spec);
    await assert.rejects(
      () => openPostgresStore(`${storeUrl(schema)}&listenUrl=${secret}`, { clock: storeSystemClock, listenUrl: 'postgres://postgres:other@127.0.0.1:5432/test' }),
      (e: unknown) => isDelayQError(e, 'INVALID_OPTION') && !e.message.includes('s3cret') && !e.message.includes('other'),
    );
    await assert.rejects(() => openPostgresStore(storeUrl(schema), { clock: storeSystemClock, poolSize: 1.5 }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
    // The same listenUrl given both ways agrees.
    const both = await openPostgresStore(`${storeUrl(schema)}&listenUrl=${encodeURIComponent(PG_URL)}`, { clock: storeSystemClock, listenUrl: PG_URL });
    await both.close();
  });
});
