/**
 * The SQL API (migration 0010; docs/postgres.md, "The SQL API"), from a real role that is
 * not a superuser and has exactly what issue 47 grants it:
 *
 *   GRANT USAGE ON SCHEMA q TO app; GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA q TO app;
 *
 * It schedules (with a policy of its own), reschedules and cancels, and the tasks fire; it
 * reads and writes no table and changes nothing through the helpers; a 3 MB payload is
 * refused. Before 0010 that role got "permission denied for table tasks", and a role that
 * could schedule could also read every payload and set run_at = 0.
 *
 * Then the functions' checks are held to the library's (core/task/validate.ts, payload.ts):
 * ids and topics, the payload's size, depth and keys, the runAt range and the policy, each
 * input both accept or both refuse with the same code.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import pg from 'pg';
import { after, before, describe, it } from 'node:test';
import { DelayQError } from '../../../src/core/errors.js';
import { DEFAULT_LIMITS, resolveRunAt, validateScheduleInput } from '../../../src/core/task/validate.js';
import { DelayQueue } from '../../../src/index.js';
import type { Delivery } from '../../../src/core/task/model.js';
import { dropSchema, freshSchema, storeUrl, tempRoles, urlAs, withClient } from '../../helpers/postgres.js';

/** SQLSTATE insufficient_privilege. */
const DENIED = '42501';

interface PgError {
  readonly code?: string;
  readonly detail?: string;
  readonly message: string;
}

/** What a statement did: 'ok', or the error's library code (DETAIL) or SQLSTATE. */
async function outcome(client: pg.Client, text: string, values: unknown[] = []): Promise<string> {
  await client.query('SAVEPOINT probe');
  try {
    await client.query(text, values);
    await client.query('RELEASE SAVEPOINT probe');
    return 'ok';
  } catch (error) {
    await client.query('ROLLBACK TO SAVEPOINT probe');
    const e = error as PgError;
    return e.detail ?? e.code ?? e.message;
  }
}

/** What the library says of the same schedule: 'ok' or its code. */
function library(run: () => unknown): string {
  try {
    run();
    return 'ok';
  } catch (error) {
    if (error instanceof DelayQError) return error.code;
    throw error;
  }
}

describe('postgres SQL API, from a role with EXECUTE alone', () => {
  const schema = freshSchema('api');
  let roles: Awaited<ReturnType<typeof tempRoles>>;
  let app: pg.Client;
  let queue: DelayQueue;
  const delivered = new Map<string, { at: number; delivery: Delivery }>();

  before(async () => {
    queue = await DelayQueue.open({ store: storeUrl(schema) });
    queue.work('api', (delivery) => void delivered.set(delivery.id, { at: Date.now(), delivery }));
    roles = await tempRoles('dq_api');
    const [name] = roles.names as [string];
    // Exactly what issue 47 asks to be enough.
    await withClient(async (c) => {
      await c.query(`GRANT USAGE ON SCHEMA "${schema}" TO "${name}"`);
      await c.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA "${schema}" TO "${name}"`);
    });
    app = new pg.Client({ connectionString: urlAs(name) });
    await app.connect();
  });
  after(async () => {
    await app.end();
    await queue.close();
    await dropSchema(schema);
    await roles.drop();
  });

  const waitFor = async (id: string): Promise<{ at: number; delivery: Delivery }> => {
    const until = Date.now() + 10_000;
    while (!delivered.has(id) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    const got = delivered.get(id);
    assert.ok(got !== undefined, `${id} delivered`);
    return got;
  };

  it('schedules with a policy of its own, reschedules and cancels inside its transaction, and the tasks fire on time', async () => {
    const fn = `"${schema}"`;
    await app.query('BEGIN');
    const created = await app.query<{ ok: boolean }>(
      `SELECT ${fn}.schedule('api-1', 'api', '{"n": 1}', now() + interval '200 milliseconds', max_attempts => 3, ttr_ms => 60000, backoff_base_ms => 10, backoff_jitter => 0) AS ok`,
    );
    await app.query(`SELECT ${fn}.schedule('api-2', 'api', '{"n": 2}', now() + interval '1 hour')`);
    await app.query(`SELECT ${fn}.schedule('api-3', 'api', 'null', now() + interval '1 hour')`);
    await app.query(`SELECT ${fn}.schedule('api-4', 'api', 'null', now() + interval '1 hour', priority => -7)`);
    await app.query('COMMIT');
    assert.deepEqual([(await queue.get('api-4'))?.priority, (await queue.get('api-3'))?.priority], [-7, 0]);
    assert.equal(created.rows[0]?.ok, true);
    const first = await waitFor('api-1');
    const record = await queue.get('api-1');
    assert.ok(record !== null && first.at >= record.runAt, 'never before runAt');
    assert.deepEqual([record.maxAttempts, record.ttrMs, record.backoff], [3, 60_000, { baseMs: 10, factor: 2, maxMs: 3_600_000, jitter: 0 }]);
    assert.deepEqual(first.delivery.payload, { n: 1 });

    // Moved from an hour ahead to now: the owner hears it on commit and fires it at once.
    await app.query('BEGIN');
    assert.equal((await app.query<{ ok: boolean }>(`SELECT ${fn}.reschedule('api-2', now() + interval '100 milliseconds') AS ok`)).rows[0]?.ok, true);
    await app.query('COMMIT');
    const committedAt = Date.now();
    const moved = await waitFor('api-2');
    assert.ok(moved.at - committedAt < 1_500, `fired ${moved.at - committedAt} ms after the commit`);
    assert.equal((await app.query<{ ok: boolean }>(`SELECT ${fn}.reschedule('api-2', now()) AS ok`)).rows[0]?.ok, false, 'no longer pending');

    await app.query('BEGIN');
    assert.equal((await app.query<{ ok: boolean }>(`SELECT ${fn}.cancel('api-3') AS ok`)).rows[0]?.ok, true);
    await app.query('ROLLBACK');
    assert.equal((await queue.get('api-3'))?.state, 'pending', 'a rolled back cancel leaves it pending');
    assert.equal((await app.query<{ ok: boolean }>(`SELECT ${fn}.cancel('api-3') AS ok`)).rows[0]?.ok, true);
    assert.equal((await queue.get('api-3'))?.state, 'cancelled');
    assert.equal((await queue.stats()).topics['api']?.cancelled, 1, 'the counters moved with it');
  });

  it('reads and writes no table, and changes nothing through the helpers', async () => {
    const fn = `"${schema}"`;
    const tables = await withClient((c) =>
      c.query<{ relname: string; first: string }>(
        `SELECT c.relname, (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum = 1) AS first
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY 1`,
        [schema],
      ),
    );
    assert.ok(tables.rows.length >= 10);
    await app.query('BEGIN');
    try {
      for (const { relname, first } of tables.rows) {
        const table = `${fn}.${relname}`;
        for (const statement of [`SELECT * FROM ${table} LIMIT 1`, `DELETE FROM ${table}`, `UPDATE ${table} SET ${first} = ${first}`, `UPDATE ${fn}.tasks SET run_at = 0`])
          assert.equal(await outcome(app, statement), DENIED, statement);
      }
      assert.equal(await outcome(app, `INSERT INTO ${fn}.tasks (id, topic, state, run_at, due_at, created_at, payload) VALUES ('forged', 'api', 'pending', 0, 0, 0, 'not json')`), DENIED);
      assert.equal(await outcome(app, `SELECT nextval('${fn}.task_seq')`), DENIED);
      // The helpers run as the caller, who may not touch their tables.
      assert.equal(await outcome(app, `SELECT * FROM ${fn}.reserve_pick('api', false, 9999999999999, 10, -1, -1)`), DENIED);
      assert.equal(await outcome(app, `SELECT * FROM ${fn}.reserve_pick_ranked('api', false, 9999999999999, 10, -1, -1)`), DENIED);
      assert.equal(await outcome(app, `SELECT * FROM ${fn}.flow_admit('api', 1, 1000, 1, 1, 1, 'me', 0, 0)`), DENIED);
      assert.equal(await outcome(app, `SELECT ${fn}.flow_bind('api', 1, 1000, 1, 'me', 1, '{}', '{}', 0)`), DENIED);
      // The checks and shard_of compute and change nothing.
      assert.equal(await outcome(app, `SELECT ${fn}.check_name('id', 'x', 256, 'INVALID_ID'), ${fn}.run_at_ms(now()), ${fn}.payload_text('{}'), ${fn}.shard_of('x', 16)`), 'ok');
    } finally {
      await app.query('ROLLBACK');
    }
    const rows = await withClient((c) => c.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".tasks`));
    assert.equal(rows.rows[0]?.n, 4, 'the four tasks of the first case, nothing else');
  });

  it('refuses a 3 MB payload, as HTTP does (it took 100 MB before), and leaves the transaction to the caller', async () => {
    const big = JSON.stringify({ blob: 'x'.repeat(3 * 1024 * 1024) });
    await app.query('BEGIN');
    assert.equal(await outcome(app, `SELECT "${schema}".schedule('big', 'api', $1::jsonb, now())`, [big]), 'PAYLOAD_TOO_LARGE');
    await app.query('ROLLBACK');
    assert.equal(await queue.get('big'), null);
  });

  it('schedule, reschedule and cancel run as the owner with a pinned search_path; no function of the schema is executable by PUBLIC', async () => {
    const procs = await withClient((c) =>
      c.query<{ proname: string; prosecdef: boolean; proconfig: string[] | null; public: boolean }>(
        `SELECT p.proname, p.prosecdef, p.proconfig,
                EXISTS (SELECT 1 FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE') AS public
           FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY p.proname`,
        [schema],
      ),
    );
    const definers = procs.rows.filter((p) => p.prosecdef).map((p) => p.proname);
    assert.deepEqual(definers, ['cancel', 'reschedule', 'schedule']);
    for (const p of procs.rows) {
      assert.equal(p.public, false, `${p.proname}: EXECUTE revoked from PUBLIC`);
      if (p.prosecdef) assert.ok(p.proconfig?.includes('search_path=pg_catalog, pg_temp'), `${p.proname}: ${String(p.proconfig)}`);
    }
  });
});

describe("postgres SQL API: its checks are the library's", () => {
  const schema = freshSchema('parity');
  let client: pg.Client;
  let serial = 0;

  before(async () => {
    await (await DelayQueue.open({ store: storeUrl(schema) })).close();
    client = new pg.Client({ connectionString: storeUrl(schema).split('?')[0] });
    await client.connect();
    await client.query('BEGIN');
  });
  after(async () => {
    await client.query('ROLLBACK');
    await client.end();
    await dropSchema(schema);
  });

  interface Input {
    id?: string;
    topic?: string;
    payloadJson?: string;
    runAt?: number;
    maxAttempts?: number;
    ttrMs?: number;
    backoff?: { baseMs?: number; factor?: number; maxMs?: number; jitter?: number };
    priority?: number;
  }

  /** The same schedule through the SQL function and through the library's validation: [sql, library]. */
  async function both(input: Input): Promise<[string, string]> {
    const id = input.id ?? `p-${serial++}`;
    const topic = input.topic ?? 'parity';
    const payloadJson = input.payloadJson ?? 'null';
    const now = Date.now();
    const runAt = input.runAt ?? now;
    const b = input.backoff ?? {};
    const sql = await outcome(
      client,
      `SELECT "${schema}".schedule($1, $2, $3::jsonb, to_timestamp($4::float8 / 1000), max_attempts => $5, ttr_ms => $6,
                                   backoff_base_ms => $7, backoff_factor => $8, backoff_max_ms => $9, backoff_jitter => $10, priority => $11)`,
      [id, topic, payloadJson, runAt, input.maxAttempts ?? null, input.ttrMs ?? null, b.baseMs ?? null, b.factor === undefined ? null : String(b.factor), b.maxMs ?? null, b.jitter === undefined ? null : String(b.jitter), input.priority ?? null],
    );
    const lib = library(() =>
      validateScheduleInput(
        {
          id,
          topic,
          payload: JSON.parse(payloadJson) as unknown,
          runAt,
          ...(input.maxAttempts === undefined ? {} : { maxAttempts: input.maxAttempts }),
          ...(input.ttrMs === undefined ? {} : { ttrMs: input.ttrMs }),
          ...(input.backoff === undefined ? {} : { backoff: input.backoff }),
          ...(input.priority === undefined ? {} : { priority: input.priority }),
        },
        now,
        () => id,
      ),
    );
    return [sql, lib];
  }

  const NAME_CHARS = [...'abcXYZ019._:-', ' ', '/', 'é', '\n', '%', '~'];
  const name = (max: number): fc.Arbitrary<string> =>
    fc.oneof(
      fc.constantFrom('.', '..', '', 'a'.repeat(max), 'a'.repeat(max + 1), '...', '-', ':'),
      fc.string({ unit: fc.constantFrom(...NAME_CHARS), maxLength: 12 }),
      fc.string({ unit: fc.constantFrom(...NAME_CHARS), minLength: max - 2, maxLength: max + 2 }),
    );

  it('ids and topics: the same shapes accepted, the same refused (INVALID_ID, INVALID_TOPIC)', async () => {
    await fc.assert(
      fc.asyncProperty(name(256), async (id) => {
        const [sql, lib] = await both({ id });
        assert.equal(sql, lib, JSON.stringify(id));
      }),
      { numRuns: 150 },
    );
    await fc.assert(
      fc.asyncProperty(name(200), async (topic) => {
        const [sql, lib] = await both({ topic });
        assert.equal(sql, lib, JSON.stringify(topic));
      }),
      { numRuns: 150 },
    );
  });

  it('runAt from 1970 to 10 years ahead (INVALID_DELAY), and the policy the library takes (INVALID_OPTION)', async () => {
    const now = Date.now();
    const max = DEFAULT_LIMITS.maxDelayMs;
    for (const runAt of [-1_000, 0, 1, now - 60_000, now + 60_000, now + max - 60_000, now + max + 60_000]) {
      const [sql, lib] = await both({ runAt });
      assert.equal(sql, lib, String(runAt));
    }
    assert.equal(library(() => resolveRunAt({ runAt: now + max + 60_000 }, now)), 'INVALID_DELAY');
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            maxAttempts: fc.constantFrom(-1, 0, 1, 5, 1_000, 1_001),
            priority: fc.constantFrom(-101, -100, -1, 0, 7, 100, 101),
            ttrMs: fc.constantFrom(0, 1, 30_000, 86_400_000, 86_400_001),
            backoff: fc.record(
              { baseMs: fc.constantFrom(-1, 0, 1_000, 5_000), factor: fc.constantFrom(0.5, 1, 2, 100, 100.5, Number.NaN, Number.POSITIVE_INFINITY), maxMs: fc.constantFrom(0, 999, 3_600_000), jitter: fc.constantFrom(-0.1, 0, 0.2, 1, 1.1, Number.NaN) },
              { requiredKeys: [] },
            ),
          },
          { requiredKeys: [] },
        ),
        async (policy) => {
          const [sql, lib] = await both(policy);
          assert.equal(sql, lib, JSON.stringify(policy));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('the payload: 1 MiB of JSON text, 128 levels, no prototype-polluting keys (PAYLOAD_TOO_LARGE, PAYLOAD_TOO_DEEP, INVALID_ARGUMENT)', async () => {
    const limit = DEFAULT_LIMITS.maxPayloadBytes;
    const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
    const cases: [string, string][] = [
      [JSON.stringify('x'.repeat(limit - 2)), 'ok'],
      [JSON.stringify('x'.repeat(limit - 1)), 'PAYLOAD_TOO_LARGE'],
      [JSON.stringify('é'.repeat((limit - 2) / 2)), 'ok'],
      [JSON.stringify(`${'é'.repeat((limit - 2) / 2)}x`), 'PAYLOAD_TOO_LARGE'],
      [JSON.stringify({ blob: 'x'.repeat(3 * 1024 * 1024) }), 'PAYLOAD_TOO_LARGE'],
      [nested(DEFAULT_LIMITS.maxPayloadDepth), 'ok'],
      [nested(DEFAULT_LIMITS.maxPayloadDepth + 1), 'PAYLOAD_TOO_DEEP'],
      [`{"a": ${nested(DEFAULT_LIMITS.maxPayloadDepth)}}`, 'PAYLOAD_TOO_DEEP'],
      ['{"__proto__": {"polluted": true}}', 'INVALID_ARGUMENT'],
      ['[{"x": {"__proto__": 1}}]', 'INVALID_ARGUMENT'],
      ['{"constructor": {"prototype": {}}}', 'INVALID_ARGUMENT'],
      ['{"constructor": [{"prototype": 1}]}', 'ok'],
      ['{"constructor": 1, "prototype": 2}', 'ok'],
      ['null', 'ok'],
    ];
    for (const [payloadJson, expected] of cases) {
      const [sql, lib] = await both({ payloadJson });
      assert.deepEqual([sql, lib], [expected, expected], payloadJson.slice(0, 60));
    }
    await fc.assert(
      // jsonb holds no \u0000 (PostgreSQL refuses it before the function runs): left out here.
      fc.asyncProperty(fc.json({ maxDepth: 6, stringUnit: 'grapheme' }).filter((json) => !json.includes('\\u0000')), async (payloadJson) => {
        const [sql, lib] = await both({ payloadJson });
        assert.equal(sql, lib, payloadJson);
      }),
      { numRuns: 100 },
    );
  });
});
