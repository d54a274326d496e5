/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/core/manual-clock.js';
import { T0, flush } from '../helpers/engine.js';
import { openTestApp, send } from '../helpers/service.js';

test('GET /v1/timeline: pending tasks per minute, per topic, checked query', async () => {
  const clock = new ManualClock(T0 + 5_000);
  const t = await openTestApp({ clock });
  try {
    for (const [id, topic, delayMs] of [['a', 'x', 10_000], ['b', 'x', 70_000], ['c', 'y', 70_000], ['d', 'y', 3_600_000]] as const)
      assert.equal((await send(t.app, { method: 'POST', url: '/v1/tasks', body: { id, topic, delayMs } })).status, 201);
    const all = await send(t.app, { method: 'GET', url: '/v1/timeline?bucketMs=60000' });
    assert.equal(all.status, 200);
    assert.equal(all.body.from, T0);
    assert.equal(all.body.to, T0 + 3_600_000);
    assert.equal(all.body.coveredUntil, T0 + 3_600_000);
    assert.equal(all.body.topic, null);
    assert.deepEqual(all.body.counts.slice(0, 3), [1, 2, 0]);
    assert.equal(all.body.counts.length, 60);
    const hourly = await send(t.app, { method: 'GET', url: `/v1/timeline?from=${T0}&to=${T0 + 2 * 3_600_000}&bucketMs=3600000&topic=y` });
    assert.deepEqual(hourly.body.counts, [1, 1]);
    // ISO 8601 from/to, read strictly: an impossible calendar date is 400, not rolled over.
    const iso = (ms: number): string => encodeURIComponent(new Date(ms).toISOString());
    const byIso = await send(t.app, { method: 'GET', url: `/v1/timeline?from=${iso(T0)}&to=${iso(T0 + 2 * 3_600_000)}&bucketMs=3600000&topic=y` });
    assert.deepEqual([byIso.status, byIso.body.from, byIso.body.counts], [200, T0, [1, 1]]);
    for (const impossible of ['from=2030-02-30T00%3A00%3A00Z', 'to=2030-01-01T24%3A00%3A00Z', 'from=1e20', `from=${'9'.repeat(17)}`]) {
      const answer = await send(t.app, { method: 'GET', url: `/v1/timeline?${impossible}` });
      assert.deepEqual([answer.status, answer.body.error.code], [400, 'INVALID_ARGUMENT'], impossible);
    }
    for (const bad of ['bucketMs=1000', 'bucketMs=60000&from=120000&to=60000', `from=${T0}&to=${T0 + 86_400_000 * 2}`, 'topic=%3Cimg%3E', 'bucketMs=abc', 'extra=1']) {
      const answer = await send(t.app, { method: 'GET', url: `/v1/timeline?${bad}` });
      assert.equal(answer.status, 400, bad);
      assert.match(answer.body.error.code, /^INVALID_/, bad);
    }
  } finally {
    await t.close();
  }
});

test('POST /v1/tasks/:id/retry and /v1/topics/:topic/dead/retry bring dead tasks back', async () => {
  const clock = new ManualClock(T0);
  const t = await openTestApp({ clock });
  try {
    const ids = ['d1', 'd2', 'd3', 'p1'];
    for (const id of ids) await send(t.app, { method: 'POST', url: '/v1/tasks', body: { id, topic: 'z', maxAttempts: 1 } });
    await flush();
    const reserved = await send(t.app, { method: 'POST', url: '/v1/topics/z/reserve', body: { max: 3 } });
    assert.equal(reserved.body.tasks.length, 3);
    for (const task of reserved.body.tasks) await send(t.app, { method: 'POST', url: `/v1/tasks/${task.id}/nack`, body: { receipt: task.receipt, error: 'x' } });
    const dead: string[] = reserved.body.tasks.map((task: { id: string }) => task.id);
    const pending = ids.find((id) => !dead.includes(id))!;

    const notDead = await send(t.app, { method: 'POST', url: `/v1/tasks/${pending}/retry`, body: {} });
    assert.equal(notDead.status, 409);
    assert.equal(notDead.body.error.code, 'TASK_NOT_DEAD');
    assert.equal((await send(t.app, { method: 'POST', url: '/v1/tasks/nope/retry', body: {} })).status, 404);

    const one = await send(t.app, { method: 'POST', url: `/v1/tasks/${dead[0]}/retry`, body: { delayMs: 60_000 } });
    assert.deepEqual(one.body, { retried: true });
    const task = await send(t.app, { method: 'GET', url: `/v1/tasks/${dead[0]}` });
    assert.equal(task.body.state, 'pending');
    assert.equal(task.body.runAt, T0 + 60_000);
    assert.equal(task.body.attempts, 0);

    const first = await send(t.app, { method: 'POST', url: '/v1/topics/z/dead/retry', body: { max: 1 } });
    assert.deepEqual(first.body, { retried: 1, more: true });
    const rest = await send(t.app, { method: 'POST', url: '/v1/topics/z/dead/retry', body: {} });
    assert.deepEqual(rest.body, { retried: 1, more: false });
    const stats = await send(t.app, { method: 'GET', url: '/v1/stats' });
    assert.equal(stats.body.counts.dead, 0);
    assert.equal(stats.body.waiting, 0);
    assert.equal((await send(t.app, { method: 'POST', url: '/v1/topics/z/dead/retry', body: { max: 0 } })).status, 400);

    // Bulk cancel of a topic's dead tasks: dead -> cancelled.
    for (const id of ['k1', 'k2']) await send(t.app, { method: 'POST', url: '/v1/tasks', body: { id, topic: 'k', maxAttempts: 1 } });
    await flush();
    const doomed = await send(t.app, { method: 'POST', url: '/v1/topics/k/reserve', body: { max: 2 } });
    for (const task of doomed.body.tasks) await send(t.app, { method: 'POST', url: `/v1/tasks/${task.id}/nack`, body: { receipt: task.receipt } });
    assert.deepEqual((await send(t.app, { method: 'POST', url: '/v1/topics/k/dead/cancel', body: {} })).body, { cancelled: 2, more: false });
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/tasks/k1' })).body.state, 'cancelled');
    assert.equal(await t.queue.cancelDead('k2'), false);
  } finally {
    await t.close();
  }
});
