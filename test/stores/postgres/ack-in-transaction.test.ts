/**
 * Completing a task inside the user's own transaction (issue 47: `q.ack(id, receipt, { tx })`
 * ignored `tx` and acked at once): `q.ack` and `q.nack` with `{ tx }` take effect if and only
 * if that transaction commits; in `work()`, a handler writes its work and `ctx.ack({ tx })` in
 * one transaction and the worker acks nothing more; a rolled back ack leaves the reservation
 * as it was, delivered again after its ttr as the next attempt. The effect on the user's own
 * table is then exactly once. Other stores answer `{ tx }` with INVALID_ARGUMENT.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { isDelayQError } from '../../../src/core/errors.js';
import type { QueueObserver } from '../../../src/core/observer.js';
import { DelayQueue } from '../../../src/open-queue.js';
import { dropSchema, freshSchema, PG_URL, storeUrl } from '../../helpers/postgres.js';

/** Waits for `done` to hold, polling every 10 ms, up to `ms`. */
async function until(done: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done()) && Date.now() < deadline) await sleep(10);
}

describe('postgres store: acking inside your transaction', () => {
  const schema = freshSchema('acktx');
  let q: DelayQueue;
  let client: pg.Client;
  const settled: string[] = [];
  const observer: QueueObserver = new Proxy({} as QueueObserver, {
    get: (_target, name) => (name === 'settled' ? (topic: string, outcome: string) => void settled.push(`${topic}:${outcome}`) : () => undefined),
  });

  before(async () => {
    q = await DelayQueue.open({ store: storeUrl(schema), observer });
    client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`CREATE TABLE "${schema}".invoices (task text, attempt int)`);
  });
  after(async () => {
    await client.end();
    await q.close();
    await dropSchema(schema);
  });

  const reserveOne = async (id: string, topic: string, ttrMs = 60_000): Promise<{ id: string; receipt: string; attempt: number; reservedUntil: number }> => {
    await q.schedule({ id, topic, payload: null, ttrMs });
    const [task] = await q.reserve(topic, { max: 1, waitMs: 5_000 });
    assert.equal(task?.id, id);
    return task;
  };

  it('q.ack with { tx }: nothing until COMMIT, nothing after ROLLBACK (the reservation as it was), done after COMMIT', async () => {
    const task = await reserveOne('a-1', 'ack.tx');
    await client.query('BEGIN');
    await q.ack(task.id, task.receipt, { tx: client });
    // Outside the transaction the task is still reserved: the ack is not in effect yet.
    assert.equal((await q.get('a-1'))?.state, 'reserved');
    await client.query('ROLLBACK');
    const kept = await q.get('a-1');
    assert.deepEqual([kept?.state, kept?.reservedUntil, kept?.attempts, kept?.history], ['reserved', task.reservedUntil, 1, []], 'a rolled back ack leaves the reservation as it was');
    // It is the same reservation: its receipt still acks.

    await client.query('BEGIN');
    await client.query(`INSERT INTO "${schema}".invoices VALUES ('a-1', 1)`);
    await q.ack(task.id, task.receipt, { tx: client });
    await client.query('COMMIT');
    const done = await q.get('a-1');
    assert.equal(done?.state, 'completed');
    assert.deepEqual(done?.history.map((e) => e.outcome), ['acked']);
    // The same ack again, through the pool: it succeeded, and is counted once.
    await q.ack(task.id, task.receipt);
    assert.deepEqual(settled.filter((s) => s.startsWith('ack.tx:')), [], 'a pull consumer\'s ack in a transaction is not counted here: the engine cannot see the commit');
    assert.equal((await q.stats()).topics['ack.tx']?.completed, 1, 'the counters moved with the transaction');
    // A stale receipt, inside a transaction: the error is the library's.
    await client.query('BEGIN');
    await assert.rejects(() => q.ack(task.id, '1.stale', { tx: client }), (e: unknown) => isDelayQError(e, 'STALE_RECEIPT'));
    await assert.rejects(() => q.ack('nope', '1.x', { tx: client }), (e: unknown) => isDelayQError(e, 'TASK_NOT_FOUND'));
    await client.query('ROLLBACK');
  });

  it('q.nack with { tx }: rolled back, the reservation stays; committed, the retry fires after its delay, told to its owner on commit', async () => {
    const task = await reserveOne('n-1', 'nack.tx');
    await client.query('BEGIN');
    const result = await q.nack(task.id, task.receipt, { tx: client, error: 'not now', delayMs: 300 });
    assert.equal(result.state, 'pending');
    await client.query('ROLLBACK');
    const kept = await q.get('n-1');
    assert.deepEqual([kept?.state, kept?.reservedUntil, kept?.lastError], ['reserved', task.reservedUntil, null]);

    await client.query('BEGIN');
    const retried = await q.nack(task.id, task.receipt, { tx: client, error: 'not now', delayMs: 300 });
    await client.query('COMMIT');
    assert.equal(retried.state, 'pending');
    const runAt = retried.state === 'pending' ? retried.runAt : 0;
    const [again] = await q.reserve('nack.tx', { max: 1, waitMs: 5_000 });
    const at = Date.now();
    assert.equal(again?.id, 'n-1');
    assert.equal(again?.attempt, 2);
    assert.ok(at >= runAt && at - runAt < 1_500, `redelivered ${at - runAt} ms after the retry's runAt`);
    assert.equal((await q.get('n-1'))?.lastError, 'not now');
    await q.ack(again.id, again.receipt);
  });

  it('work(): the handler writes its work and ctx.ack({ tx }) in one transaction; a rollback is delivered again after the ttr as the next attempt; the work is done exactly once', async () => {
    const attempts: number[] = [];
    const worker = q.work<null>(
      'invoice',
      async (delivery, ctx) => {
        attempts.push(delivery.attempt);
        const tx = new pg.Client({ connectionString: PG_URL });
        await tx.connect();
        try {
          await tx.query('BEGIN');
          await tx.query(`INSERT INTO "${schema}".invoices VALUES ($1, $2)`, [delivery.id, delivery.attempt]);
          await ctx.ack({ tx });
          // The first attempt fails after its ack, inside the transaction: both roll back.
          if (delivery.attempt === 1) throw new Error('the invoice service failed');
          await tx.query('COMMIT');
        } catch (error) {
          await tx.query('ROLLBACK');
          throw error;
        } finally {
          await tx.end();
        }
      },
      { concurrency: 2 },
    );
    try {
      // A short ttr: the rolled back attempt is delivered again once it runs out.
      const scheduledAt = Date.now();
      await q.schedule({ id: 'inv-1', topic: 'invoice', payload: null, ttrMs: 1_000 });
      await until(async () => (await q.get('inv-1'))?.state === 'completed', 10_000);
      const record = await q.get('inv-1');
      assert.equal(record?.state, 'completed');
      assert.deepEqual(attempts, [1, 2]);
      assert.ok(Date.now() - scheduledAt >= 1_000, 'the second attempt came once the first reservation ran out');
      // Attempt 1 ran out (its ttr: the expiry's entry), attempt 2 acked in its transaction; the worker acked nothing more.
      assert.deepEqual(record?.history.map((e) => [e.attempt, e.outcome]), [[1, 'expired'], [2, 'acked']]);
      const rows = await client.query<{ task: string; attempt: number }>(`SELECT task, attempt FROM "${schema}".invoices WHERE task = 'inv-1'`);
      assert.deepEqual(rows.rows, [{ task: 'inv-1', attempt: 2 }], 'the work of the rolled back attempt is gone with its ack');
      // The worker read the committed ack back and counted it, once.
      await until(() => settled.includes('invoice:acked'), 2_000);
      assert.equal(settled.filter((s) => s === 'invoice:acked').length, 1);
    } finally {
      await worker.close();
    }
  });

  it('work(): ctx.nack({ tx }) fails the attempt only if the transaction commits; ctx.ack() without tx acks at once; neither is settled again by the worker', async () => {
    const seen: string[] = [];
    const worker = q.work<null>('mixed', async (delivery, ctx) => {
      seen.push(`${delivery.id}#${delivery.attempt}`);
      if (delivery.id === 'now') return ctx.ack();
      const tx = new pg.Client({ connectionString: PG_URL });
      await tx.connect();
      try {
        await tx.query('BEGIN');
        if (delivery.attempt === 1) await ctx.nack({ tx, error: 'later', delayMs: 100 });
        else await ctx.ack({ tx });
        await tx.query('COMMIT');
      } finally {
        await tx.end();
      }
    });
    try {
      await q.schedule({ id: 'now', topic: 'mixed', payload: null });
      await q.schedule({ id: 'later', topic: 'mixed', payload: null });
      await until(async () => (await q.get('later'))?.state === 'completed' && (await q.get('now'))?.state === 'completed', 10_000);
      assert.deepEqual((await q.get('now'))?.history.map((e) => e.outcome), ['acked']);
      assert.deepEqual((await q.get('later'))?.history.map((e) => [e.attempt, e.outcome, e.error]), [[1, 'nacked', 'later'], [2, 'acked', null]]);
      assert.deepEqual([...seen].sort(), ['later#1', 'later#2', 'now#1']);
    } finally {
      await worker.close();
    }
  });
});

describe('acking inside your transaction elsewhere', () => {
  it('the memory store answers { tx } with INVALID_ARGUMENT, from q.ack, q.nack and a handler, and settles nothing', async () => {
    const q = await DelayQueue.open({ store: 'memory' });
    const tx = { query: () => Promise.reject(new Error('not reached')) };
    try {
      await q.schedule({ id: 'm', topic: 't', payload: null });
      const [task] = await q.reserve('t', { max: 1 });
      await assert.rejects(() => q.ack(task!.id, task!.receipt, { tx }), (e: unknown) => isDelayQError(e, 'INVALID_ARGUMENT') && /ack inside a transaction/.test(e.message));
      await assert.rejects(() => q.nack(task!.id, task!.receipt, { tx }), (e: unknown) => isDelayQError(e, 'INVALID_ARGUMENT'));
      assert.equal((await q.get('m'))?.state, 'reserved');
      await q.ack(task!.id, task!.receipt);
      let refused: unknown = null;
      await q.schedule({ id: 'w', topic: 'w', payload: null });
      const worker = q.work('w', async (_delivery, ctx) => {
        await ctx.ack({ tx }).catch((error: unknown) => {
          refused = error;
          throw error;
        });
      });
      await until(() => refused !== null, 5_000);
      await worker.close();
      assert.ok(isDelayQError(refused, 'INVALID_ARGUMENT'));
    } finally {
      await q.close();
    }
  });
});
