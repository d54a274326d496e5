// PUT, GET and DELETE /v1/topics/:topic/limits over a listening server, through the client
// and as raw requests: limits stored and normalised, held by the dispatcher (a due task of a
// topic whose bucket is empty waits), shown by /v1/stats (limits, throttled); bad input is a
// 4xx { error: { code, message } } and changes nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useListeningApp } from '../helpers/service.js';

const json = { 'content-type': 'application/json' };

describe('/v1/topics/:topic/limits', () => {
  const server = useListeningApp();

  it('PUT answers the stored limits (defaults filled in), GET reads them, DELETE clears them, then 404 LIMITS_NOT_FOUND', async () => {
    const put = await fetch(`${server.url}/v1/topics/mail/limits`, { method: 'PUT', headers: json, body: JSON.stringify({ rate: 5 }) });
    assert.equal(put.status, 200);
    assert.deepEqual(await put.json(), { topic: 'mail', limits: { rate: 5, periodMs: 1000, burst: 5, concurrency: null } });
    assert.deepEqual(await server.client.topics.setLimits('mail', { rate: 2, periodMs: 60_000, burst: 1, concurrency: 3 }), { rate: 2, periodMs: 60_000, burst: 1, concurrency: 3 });
    assert.deepEqual(await server.client.topics.getLimits('mail'), { rate: 2, periodMs: 60_000, burst: 1, concurrency: 3 });
    assert.deepEqual(await server.t.queue.topics.getLimits('mail'), { rate: 2, periodMs: 60_000, burst: 1, concurrency: 3 });

    const deleted = await fetch(`${server.url}/v1/topics/mail/limits`, { method: 'DELETE' });
    assert.equal(deleted.status, 200);
    assert.deepEqual(await deleted.json(), { deleted: true });
    for (const method of ['GET', 'DELETE']) {
      const missing = await fetch(`${server.url}/v1/topics/mail/limits`, { method });
      assert.equal(missing.status, 404, method);
      const body = (await missing.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'LIMITS_NOT_FOUND');
      assert.match(body.error.message, /mail/);
    }
    assert.equal(await server.client.topics.getLimits('mail'), null);
    assert.equal(await server.client.topics.clearLimits('mail'), false);
  });

  it('holds a limited topic: with burst 1 per minute, one of two due tasks is reserved; stats show limits and throttled', async () => {
    await server.client.topics.setLimits('slow', { rate: 1, periodMs: 60_000 });
    await server.client.schedule({ id: 's1', topic: 'slow' });
    await server.client.schedule({ id: 's2', topic: 'slow' });
    const first = await server.client.reserve('slow', { max: 2, waitMs: 2_000 });
    assert.equal(first.length, 1);
    assert.deepEqual(await server.client.reserve('slow', { waitMs: 300 }), []);
    const stats = await server.client.stats();
    assert.deepEqual(stats.limits['slow'], { rate: 1, periodMs: 60_000, burst: 1, concurrency: null });
    assert.ok((stats.throttled['slow'] ?? 0) >= 1, JSON.stringify(stats.throttled));
    assert.equal(stats.topics['slow']?.pending, 1, 'the held task stays pending');
    assert.equal(await server.client.topics.clearLimits('slow'), true);
    assert.deepEqual((await server.client.reserve('slow', { waitMs: 2_000 })).length, 1);
  });

  it('refuses bad input with a 4xx and { error: { code, message } }, storing nothing', async () => {
    for (const [topic, body, code, message] of [
      ['bad', {}, 'INVALID_ARGUMENT', /limits: need a rate or a concurrency/],
      // A number out of its range hears the whole rule, as the library says it (issue 49: a -3 heard "must be integer").
      ['bad', { rate: -3 }, 'INVALID_OPTION', 'rate: must be a whole number from 1 to 1000000 (got -3)'],
      ['bad', { rate: 0 }, 'INVALID_OPTION', 'rate: must be a whole number from 1 to 1000000 (got 0)'],
      ['bad', { rate: 1.5 }, 'INVALID_OPTION', 'rate: must be a whole number from 1 to 1000000 (got 1.5)'],
      ['bad', { rate: '5' }, 'INVALID_OPTION', 'rate: must be a whole number from 1 to 1000000 (got "5")'],
      ['bad', { rate: '-3' }, 'INVALID_OPTION', 'rate: must be a whole number from 1 to 1000000 (got "-3")'],
      ['bad', { rate: 2_000_000 }, 'INVALID_OPTION', 'rate: must be a whole number from 1 to 1000000 (got 2000000)'],
      ['bad', { rate: 5, burst: -1 }, 'INVALID_OPTION', 'burst: must be a whole number from 1 to 1000000 (got -1)'],
      ['bad', { periodMs: 1000 }, 'INVALID_ARGUMENT', /limits: need a rate or a concurrency/],
      ['bad', { concurrency: 2, burst: 3 }, 'INVALID_ARGUMENT', /rate: is needed with periodMs or burst/],
      ['bad', { rate: 1, extra: 1 }, 'INVALID_ARGUMENT', /extra: unknown field/],
      ['bad', { concurrency: 0 }, 'INVALID_OPTION', 'concurrency: must be a whole number from 1 to 100000 (got 0)'],
      ['h%20m', { rate: 1 }, 'INVALID_TOPIC', /topic/],
    ] as const) {
      const answer = await fetch(`${server.url}/v1/topics/${topic}/limits`, { method: 'PUT', headers: json, body: JSON.stringify(body) });
      assert.equal(answer.status, 400, JSON.stringify(body));
      const envelope = (await answer.json()) as { error: { code: string; message: string } };
      assert.equal(envelope.error.code, code, JSON.stringify(body));
      if (typeof message === 'string') assert.equal(envelope.error.message, message);
      else assert.match(envelope.error.message, message);
    }
    assert.equal(await server.t.queue.topics.getLimits('bad'), null);
    // The library says the same of the same value.
    await assert.rejects(server.t.queue.topics.setLimits('bad', { rate: -3 }), { code: 'INVALID_OPTION', message: 'rate: must be a whole number from 1 to 1000000 (got -3)' });
  });
});
