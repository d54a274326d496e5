/**
 * Transactional scheduling on the PostgreSQL store: `q.schedule(task, { tx })`,
 * `q.cancel(id, { tx })` and the SQL functions `<schema>.schedule` / `<schema>.cancel`,
 * inside transactions of the test's own (a plain node-postgres client after BEGIN). The
 * seeds' case: an order and its close-if-unpaid task in one transaction; the payment and
 * the cancel of that task in another. Real clock where delivery is watched: the assertions
 * are never-early and an order of magnitude below what the loader alone would give (a
 * committed task nobody was told of waits for a pass every horizonMs / 4 = 15 s).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { isDelayQError } from '../../../src/core/errors.js';
import { DelayQueue } from '../../../src/open-queue.js';
import { dropSchema, freshSchema, PG_URL, storeUrl } from '../../helpers/postgres.js';

/** Far below the loader's 15 s: only the commit's notice brings a task this soon. */
const PROMPT_MS = 1_500;

describe('postgres store: scheduling inside your transaction', () => {
  const schema = freshSchema('tx');
  let q: DelayQueue;
  let client: pg.Client;
  const delivered = new Map<string, { at: number; runAt: number; payload: unknown }>();

  before(async () => {
    q = await DelayQueue.open({ store: storeUrl(schema) });
    q.work('orders.close', (d) => void delivered.set(d.id, { at: Date.now(), runAt: d.runAt, payload: d.payload }));
    client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`CREATE TABLE "${schema}".orders (id int PRIMARY KEY, paid boolean NOT NULL DEFAULT false)`);
  });
  after(async () => {
    await client.end();
    await q.close();
    await dropSchema(schema);
  });

  const waitFor = async (id: string, ms: number): Promise<void> => {
    const deadline = Date.now() + ms;
    while (!delivered.has(id) && Date.now() < deadline) await sleep(10);
  };

  it('a rolled back transaction leaves neither the order nor its task, and nothing fires', async () => {
    const runAt = Date.now() + 200;
    await client.query('BEGIN');
    await client.query(`INSERT INTO "${schema}".orders (id) VALUES (1)`);
    const result = await q.schedule({ id: 'close-order-1', topic: 'orders.close', payload: { order: 1 }, runAt }, { tx: client });
    assert.deepEqual(result, { id: 'close-order-1', runAt, created: true });
    await client.query('ROLLBACK');
    assert.equal(await q.get('close-order-1'), null);
    assert.equal((await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".orders`)).rows[0]?.n, 0);
    await sleep(600);
    assert.equal(delivered.has('close-order-1'), false);
    assert.equal((await q.stats()).counts.pending, 0, 'the counters rolled back with it');
  });

  it('a committed task fires on time: never before runAt, within ms of it, told by the notice sent on commit', async (t) => {
    const runAt = Date.now() + 400;
    await client.query('BEGIN');
    await client.query(`INSERT INTO "${schema}".orders (id) VALUES (2)`);
    await q.schedule({ id: 'close-order-2', topic: 'orders.close', payload: { order: 2 }, runAt }, { tx: client });
    // Not committed yet: another session does not see it, and nothing fires.
    assert.equal(await q.get('close-order-2'), null);
    await client.query('COMMIT');
    await waitFor('close-order-2', 10_000);
    const d = delivered.get('close-order-2');
    assert.ok(d !== undefined, 'delivered');
    assert.ok(d.at >= runAt, `fired ${runAt - d.at} ms early`);
    assert.ok(d.at - runAt < PROMPT_MS, `fired ${d.at - runAt} ms after runAt`);
    assert.deepEqual(d.payload, { order: 2 });
    t.diagnostic(`delivered ${d.at - runAt} ms after runAt`);
  });

  it("the seeds' order: paid within the time, the close task is cancelled in the payment's transaction; a cancel rolled back leaves it pending", async () => {
    const runAt = Date.now() + 60 * 60_000;
    await client.query('BEGIN');
    await client.query(`INSERT INTO "${schema}".orders (id) VALUES (3)`);
    await q.schedule({ id: 'close-order-3', topic: 'orders.close', payload: { order: 3 }, runAt }, { tx: client });
    await client.query('COMMIT');

    await client.query('BEGIN');
    await client.query(`UPDATE "${schema}".orders SET paid = true WHERE id = 3`);
    assert.equal(await q.cancel('close-order-3', { tx: client }), true);
    await client.query('ROLLBACK');
    assert.equal((await q.get('close-order-3'))?.state, 'pending', 'the payment rolled back: the task is still pending');
    assert.equal((await q.stats()).counts.pending, 1);

    await client.query('BEGIN');
    await client.query(`UPDATE "${schema}".orders SET paid = true WHERE id = 3`);
    assert.deepEqual(await q.cancel('close-order-3', { tx: client, outcome: true }), 'cancelled');
    await client.query('COMMIT');
    assert.equal((await q.get('close-order-3'))?.state, 'cancelled');
    assert.equal((await q.stats()).counts.cancelled, 1);
  });

  it('the same from SQL: schedule() and cancel() answer whether they changed something, and fire on commit only', async () => {
    const fn = `"${schema}"`;
    await client.query('BEGIN');
    const created = await client.query<{ ok: boolean }>(`SELECT ${fn}.schedule('sql-order-4', 'orders.close', '{"order": 4}', now() + interval '300 milliseconds') AS ok`);
    const again = await client.query<{ ok: boolean }>(`SELECT ${fn}.schedule('sql-order-4', 'orders.close', '{"order": 5}', now()) AS ok`);
    await client.query('COMMIT');
    const committedAt = Date.now();
    assert.equal(created.rows[0]?.ok, true);
    assert.equal(again.rows[0]?.ok, false, 'the id exists: left as it is');
    const record = await q.get('sql-order-4');
    assert.ok(record !== null);
    await waitFor('sql-order-4', 10_000);
    const d = delivered.get('sql-order-4');
    assert.ok(d !== undefined, 'delivered');
    assert.ok(d.at >= record.runAt, 'never before runAt');
    assert.ok(d.at - committedAt < PROMPT_MS, `fired ${d.at - committedAt} ms after the commit`);
    assert.deepEqual(d.payload, { order: 4 });

    await client.query('BEGIN');
    await client.query(`SELECT ${fn}.schedule('sql-order-6', 'orders.close', 'null', now() + interval '200 milliseconds')`);
    await client.query('ROLLBACK');
    await sleep(500);
    assert.equal(await q.get('sql-order-6'), null);
    assert.equal(delivered.has('sql-order-6'), false);

    await client.query(`SELECT ${fn}.schedule('sql-order-7', 'orders.close', 'null', now() + interval '1 hour')`);
    await client.query('BEGIN');
    assert.equal((await client.query<{ ok: boolean }>(`SELECT ${fn}.cancel('sql-order-7') AS ok`)).rows[0]?.ok, true);
    await client.query('ROLLBACK');
    assert.equal((await q.get('sql-order-7'))?.state, 'pending');
    assert.equal((await client.query<{ ok: boolean }>(`SELECT ${fn}.cancel('sql-order-7') AS ok`)).rows[0]?.ok, true);
    assert.equal((await client.query<{ ok: boolean }>(`SELECT ${fn}.cancel('sql-order-7') AS ok`)).rows[0]?.ok, false, 'no longer pending');
    assert.equal((await q.get('sql-order-7'))?.state, 'cancelled');
    const stats = await q.stats();
    assert.equal(stats.topics['orders.close']?.cancelled, 2, 'order 3 and sql-order-7, counted by the SQL function too');

    await assert.rejects(() => client.query(`SELECT ${fn}.schedule('bad id', 'orders.close', 'null', now())`), (e: { message: string; detail?: string }) => /id: may contain only/.test(e.message) && e.detail === 'INVALID_ID');
  });
});

describe('transactional scheduling elsewhere', () => {
  it('a store that cannot refuses { tx } with INVALID_ARGUMENT, changing nothing', async () => {
    const q = await DelayQueue.open({ store: 'memory' });
    const tx = { query: () => Promise.reject(new Error('not reached')) };
    try {
      await assert.rejects(() => q.schedule({ id: 'a', topic: 't', payload: null, runAt: 1 }, { tx }), (e: unknown) => isDelayQError(e, 'INVALID_ARGUMENT'));
      await assert.rejects(() => q.cancel('a', { tx }), (e: unknown) => isDelayQError(e, 'INVALID_ARGUMENT'));
      assert.equal(await q.get('a'), null);
    } finally {
      await q.close();
    }
  });
});
