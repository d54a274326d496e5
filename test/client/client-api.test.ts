// The HTTP client against a real listening app (memory queue): every method, and errors
// rebuilt from their codes.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import ts from 'typescript';
import { DelayQClient, DelayQClientError, isDelayQClientError } from '../../src/client/index.js';
import { openTestApp, type TestApp } from '../helpers/service.js';

describe('client', () => {
  let t: TestApp;
  let client: DelayQClient;
  let url: string;
  before(async () => {
    t = await openTestApp({ token: 'k' });
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    client = new DelayQClient({ url, token: 'k' });
  });
  after(() => t.close());

  it('priority: scheduled one by one and in a batch, shown by get, served first among due tasks; out of bounds is 400 INVALID_OPTION', async () => {
    await client.topics.pause('prio');
    await client.schedule({ id: 'p-low', topic: 'prio', priority: -3 });
    await client.schedule({ id: 'p-plain', topic: 'prio' });
    await client.scheduleMany([{ id: 'p-top', topic: 'prio', priority: 50 }, { id: 'p-mid', topic: 'prio', priority: 5 }]);
    assert.equal((await client.get('p-top'))?.priority, 50);
    assert.equal((await client.get('p-plain'))?.priority, 0);
    // Due at once, on a paused topic: all four wait in the ready queue until it is resumed.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await client.topics.resume('prio');
    assert.deepEqual((await client.reserve('prio', { max: 4, waitMs: 2_000 })).map((d) => d.id), ['p-top', 'p-mid', 'p-plain', 'p-low']);
    for (const bad of [101, 2.5]) await assert.rejects(client.schedule({ topic: 'prio', priority: bad }), (e: unknown) => isDelayQClientError(e, 'INVALID_OPTION') && e.status === 400);
    const batch = await client.scheduleMany([{ topic: 'prio', priority: -101 }]);
    assert.equal(batch[0] && 'error' in batch[0] ? batch[0].error.code : null, 'INVALID_OPTION');
  });

  it('timeline, retryDead, retryDeadOfTopic', async () => {
    const runAt = Date.UTC(2031, 5, 1, 10, 30, 15);
    await client.schedule({ id: 'tl1', topic: 'timeline', runAt });
    const minute = Date.UTC(2031, 5, 1, 10, 30);
    const timeline = await client.timeline({ from: new Date(minute - 60_000), to: minute + 120_000, topic: 'timeline' });
    assert.deepEqual(timeline.counts, [0, 1, 0]);
    assert.equal(timeline.coveredUntil, minute + 120_000);
    assert.equal((await client.timeline({ from: '2031-06-01T10:30:00Z', to: minute + 60_000 })).counts[0], 1);
    assert.equal((await client.timeline({ from: '2031-06-01T12:30:00+02:00', to: minute + 60_000 })).counts[0], 1);
    // Strings go to the server as they are and are read there, strictly: 31 June is refused, not 1 July.
    await assert.rejects(client.timeline({ from: '2031-06-31T10:30:00Z' }), (e: unknown) => isDelayQClientError(e, 'INVALID_ARGUMENT') && e.status === 400);
    for (const id of ['rd1', 'rd2']) await client.schedule({ id, topic: 'redo', maxAttempts: 1 });
    const tasks = await client.reserve('redo', { max: 2, waitMs: 2_000 });
    for (const task of tasks) await client.nack(task.id, task.receipt, { error: 'no' });
    assert.equal(await client.retryDead('rd1', { delayMs: 60_000 }), true);
    assert.equal(await client.retryDead('rd1'), false);
    assert.equal(await client.retryDead('missing'), false);
    assert.deepEqual(await client.retryDeadOfTopic('redo'), { retried: 1, more: false });
    assert.equal((await client.get('rd2'))?.state, 'pending');
    await client.schedule({ id: 'cd1', topic: 'giveup', maxAttempts: 1 });
    const [doomed] = await client.reserve('giveup', { waitMs: 2_000 });
    await client.nack(doomed!.id, doomed!.receipt);
    assert.deepEqual(await client.cancelDeadOfTopic('giveup', { max: 5 }), { cancelled: 1, more: false });
    assert.equal((await client.get('cd1'))?.state, 'cancelled');
  });

  it('schedule, get, list, reschedule, cancel', async () => {
    const created = await client.schedule({ id: 'c1', topic: 'orders', payload: { n: 1 }, delayMs: 60_000 });
    assert.equal(created.created, true);
    assert.equal((await client.schedule({ id: 'c1', topic: 'orders' })).created, false);
    const at = new Date(Date.now() + 120_000);
    const byDate = await client.schedule({ topic: 'orders', runAt: at });
    assert.equal(byDate.runAt, at.getTime());
    const task = await client.get<{ n: number }>('c1');
    assert.equal(task?.payload.n, 1);
    assert.equal(await client.get('missing'), null);
    const listed = await client.list({ topic: 'orders', state: 'pending', limit: 10 });
    assert.ok(listed.some((x) => x.id === 'c1'));
    assert.equal((await client.list({ topic: 'orders', afterId: listed.at(-1)!.id })).length, 0);
    assert.equal(await client.reschedule('c1', { delayMs: 1_000 }), true);
    assert.equal(await client.reschedule('c1', { runAt: '2031-01-01T00:00:00Z' }), true);
    assert.equal((await client.get('c1'))?.runAt, Date.UTC(2031, 0, 1));
    for (const impossible of ['2031-02-29T00:00:00Z', '2031-01-01T24:00:00Z', '2031-01-32T00:00:00Z']) {
      await assert.rejects(client.reschedule('c1', { runAt: impossible }), (e: unknown) => isDelayQClientError(e, 'INVALID_DELAY') && e.status === 400, impossible);
      await assert.rejects(client.schedule({ topic: 'orders', runAt: impossible }), (e: unknown) => isDelayQClientError(e, 'INVALID_DELAY'), impossible);
    }
    assert.equal((await client.get('c1'))?.runAt, Date.UTC(2031, 0, 1));
    assert.equal(await client.reschedule('missing', { delayMs: 1 }), false);
    assert.equal(await client.cancel('c1'), true);
    assert.equal(await client.cancel('c1'), false);
    assert.equal(await client.cancel('missing'), false);
    await client.scheduleMany([{ id: 'm1', topic: 'orders', delayMs: 60_000 }, { id: 'm2', topic: 'orders', delayMs: 60_000 }]);
    assert.deepEqual(await client.cancelMany(['m1', 'c1', 'm2']), [true, false, true]);
    await assert.rejects(client.cancelMany(['m1', 'bad id']), (e: unknown) => isDelayQClientError(e) && e.code === 'INVALID_ID');
    await client.scheduleMany([{ id: 'a1', topic: 'acks' }, { id: 'a2', topic: 'acks' }]);
    const [a1, a2] = await client.reserve('acks', { max: 2 });
    assert.deepEqual(await client.ackMany([a1!, { id: a2!.id, receipt: `${a2!.receipt}x` }, { id: 'gone', receipt: 'r' }]), ['acked', 'stale', 'not_found']);
  });

  it('scheduleMany returns one result per task', async () => {
    const results = await client.scheduleMany([{ topic: 'b' }, { topic: 'bad topic' }]);
    assert.equal(results.length, 2);
    assert.ok('id' in results[0]!);
    assert.ok('error' in results[1]! && results[1].error.code === 'INVALID_TOPIC');
  });

  it('reserve, ack, nack; long-poll; abort resolves []', async () => {
    await client.schedule({ id: 'w1', topic: 'work', payload: 'a' });
    await client.schedule({ id: 'w2', topic: 'work', payload: 'b' });
    const [d1, d2] = await client.reserve<string>('work', { max: 2 });
    assert.deepEqual([d1?.id, d2?.id], ['w1', 'w2']);
    await client.ack(d1!.id, d1!.receipt);
    await client.ack(d1!.id, d1!.receipt); // the same ack again succeeds (idempotent)
    await assert.rejects(client.ack(d1!.id, `${d1!.receipt}x`), (e: unknown) => isDelayQClientError(e, 'STALE_RECEIPT') && e.status === 409);
    assert.deepEqual(await client.nack(d2!.id, d2!.receipt, { delayMs: 50, error: 'retry me' }), { state: 'pending', runAt: (await client.get('w2'))!.runAt });
    const waited = await client.reserve('work', { waitMs: 5_000 });
    assert.equal(waited[0]?.id, 'w2');
    assert.equal(waited[0]?.attempt, 2);
    // More time for the reservation: it now runs out an hour from now; a wrong receipt is STALE_RECEIPT.
    const { reservedUntil } = await client.extend('w2', waited[0].receipt, { ttrMs: 3_600_000 });
    assert.ok(reservedUntil > waited[0].reservedUntil + 3_000_000, `${reservedUntil}`);
    assert.equal((await client.get('w2'))?.reservedUntil, reservedUntil);
    await assert.rejects(client.extend('w2', `${waited[0].receipt}x`), (e: unknown) => isDelayQClientError(e, 'STALE_RECEIPT') && e.status === 409);
    await assert.rejects(client.extend('nope', waited[0].receipt), (e: unknown) => isDelayQClientError(e, 'TASK_NOT_FOUND') && e.status === 404);
    await assert.rejects(client.extend('w2', waited[0].receipt, { ttrMs: 0 }), (e: unknown) => isDelayQClientError(e, 'INVALID_OPTION') && e.status === 400);
    await client.ack('w2', waited[0].receipt);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    assert.deepEqual(await client.reserve('idle', { waitMs: 10_000, signal: controller.signal }), []);
  });

  it('stats and health', async () => {
    const stats = await client.stats();
    assert.equal(stats.store, 'memory');
    assert.ok(stats.counts.completed >= 1);
    assert.deepEqual(await client.health(), { status: 'ok' });
  });

  it('topics.setLimits, getLimits, clearLimits: stored as the server normalises them, null and false when none; stats carry them', async () => {
    assert.equal(await client.topics.getLimits('flow'), null);
    assert.deepEqual(await client.topics.setLimits('flow', { rate: 3, burst: 6 }), { rate: 3, periodMs: 1000, burst: 6, concurrency: null });
    assert.deepEqual(await client.topics.getLimits('flow'), { rate: 3, periodMs: 1000, burst: 6, concurrency: null });
    assert.deepEqual((await client.stats()).limits['flow'], { rate: 3, periodMs: 1000, burst: 6, concurrency: null });
    await assert.rejects(client.topics.setLimits('flow', { burst: 2 }), (e: unknown) => isDelayQClientError(e, 'INVALID_ARGUMENT') && e.status === 400);
    await assert.rejects(client.topics.getLimits('bad topic'), (e: unknown) => isDelayQClientError(e, 'INVALID_TOPIC'));
    assert.equal(await client.topics.clearLimits('flow'), true);
    assert.equal(await client.topics.clearLimits('flow'), false);
    assert.equal(await client.topics.getLimits('flow'), null);
  });

  it('rebuilds server errors as DelayQClientError with code and status', async () => {
    await assert.rejects(client.schedule({ topic: 'x', delayMs: -1 }), (e: unknown) => e instanceof DelayQClientError && e.code === 'INVALID_DELAY' && e.status === 400 && e.details?.['field'] === 'delayMs');
    await assert.rejects(client.schedule({ topic: 'x', payload: 'y'.repeat(1024 * 1024) }), (e: unknown) => isDelayQClientError(e, 'PAYLOAD_TOO_LARGE') && e.status === 413);
    await assert.rejects(client.reserve('x', { waitMs: 70_000 }), (e: unknown) => isDelayQClientError(e, 'INVALID_OPTION'));
    const anonymous = new DelayQClient({ url });
    await assert.rejects(anonymous.stats(), (e: unknown) => isDelayQClientError(e, 'UNAUTHORIZED') && e.status === 401);
  });

  it('reports SERVER_UNREACHABLE, TIMEOUT and BAD_RESPONSE with their own codes', async () => {
    await assert.rejects(new DelayQClient({ url: 'http://127.0.0.1:1' }).stats(), (e: unknown) => isDelayQClientError(e, 'SERVER_UNREACHABLE') && e.status === 0);
    const other = createServer((req, res) => {
      if (req.url?.startsWith('/slow')) return;
      res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>');
    });
    await new Promise<void>((done) => other.listen(0, '127.0.0.1', done));
    const port = (other.address() as { port: number }).port;
    try {
      await assert.rejects(new DelayQClient({ url: `http://127.0.0.1:${port}` }).stats(), (e: unknown) => isDelayQClientError(e, 'BAD_RESPONSE') && e.status === 502);
      await assert.rejects(new DelayQClient({ url: `http://127.0.0.1:${port}/slow`, timeoutMs: 100 }).stats(), (e: unknown) => isDelayQClientError(e, 'TIMEOUT'));
    } finally {
      other.closeAllConnections();
      other.close();
    }
  });
});

describe('client import graph', () => {
  it('reaches only src/client and src/wire, and no package', () => {
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
        assert.ok(fileName.startsWith('.'), `${relative('.', file)} imports the package ${fileName}`);
        visit(resolve(dirname(file), fileName.replace(/\.js$/, '.ts')));
      }
    };
    visit(resolve('src/client/index.ts'));
    for (const file of seen) assert.match(relative('src', file), /^(client|wire)\//, file);
    assert.ok(seen.size >= 4);
  });
});
