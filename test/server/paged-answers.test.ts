// Answers bounded in bytes and paged (issue 49): GET /v1/tasks ends a page once it passes
// 4 MiB of tasks (payloads, errors, history) and says where the next starts, through the
// library's listPage, the client and `delayq ls`; GET /v1/push pages the subscriptions by
// topic (limit, after, next) and GET /v1/activity its per-topic parts (topicLimit, after,
// topicsNext), as GET /v1/stats does.
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call --
   answers are untyped JSON here; each field used is checked by an assertion. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TASK_PAGE_SIZE } from '../../src/core/task/list-page.js';
import { Registry } from 'prom-client';
import type { PushTransport } from '../../src/core/push.js';
import { DelayQueue } from '../../src/open-queue.js';
import { buildApp } from '../../src/server/app.js';
import { send, useListeningApp } from '../helpers/service.js';
import { runCliProcess } from '../helpers/service-process.js';

describe('answers bounded in bytes, paged', () => {
  const server = useListeningApp();

  it('GET /v1/tasks: a page ends after the task that passes 4 MiB, whatever limit says; next continues, and the pages cover every task once', async () => {
    const { t, url, client } = server;
    // Twelve tasks of a 1 MB payload (the payload limit): 12 MB in one answer before.
    const big = 'x'.repeat(999_000);
    const ids = Array.from({ length: 12 }, (_, i) => `big-${String(i).padStart(2, '0')}`);
    for (const id of ids) await t.queue.schedule({ id, topic: 'bulky', payload: { big }, delayMs: 3_600_000 });
    await t.queue.schedule({ id: 'small-1', topic: 'bulky', payload: { n: 1 }, delayMs: 3_600_000 });

    const first = await fetch(`${url}/v1/tasks?topic=bulky&limit=100`);
    const text = await first.text();
    assert.ok(text.length <= TASK_PAGE_SIZE + 1_100_000, `one answer of ${text.length} characters: at most 4 MiB and one task`);
    const page = JSON.parse(text) as { tasks: { id: string }[]; next: string | null };
    // 4 x ~1 MB fit under 4 MiB; the fifth passes it and ends the page.
    assert.deepEqual(page.tasks.map((task) => task.id), ids.slice(0, 5));
    assert.equal(page.next, 'big-04');

    // Following `next` lists each task once, in id order; the client and the library agree.
    const seen: string[] = [];
    for (let afterId: string | undefined; ; ) {
      const { tasks, next } = await client.listPage({ topic: 'bulky', limit: 100, ...(afterId === undefined ? {} : { afterId }) });
      const same = await t.queue.listPage({ topic: 'bulky', limit: 100, ...(afterId === undefined ? {} : { afterId }) });
      assert.deepEqual([tasks.map((task) => task.id), next], [same.tasks.map((task) => task.id), same.next]);
      seen.push(...tasks.map((task) => task.id));
      if (next === null) break;
      afterId = next;
    }
    assert.deepEqual(seen, [...ids, 'small-1']);
    // A limit below the byte bound still binds; small tasks fill a page to its limit.
    assert.deepEqual((await client.listPage({ topic: 'bulky', limit: 2 })).next, 'big-01');
    assert.deepEqual(await client.listPage({ topic: 'bulky', afterId: 'big-11' }).then((p) => [p.tasks.map((task) => task.id), p.next]), [['small-1'], null]);

    // delayq ls says where the next page starts when the server cut it short.
    const ls = await runCliProcess(['--server', url, 'ls', '--topic', 'bulky', '--limit', '100']);
    assert.equal(ls.code, 0, ls.stderr);
    const lines = ls.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 1 + 5 + 1, ls.stdout);
    assert.equal(lines.at(-1), 'more: delayq ls --topic bulky --limit 100 --after big-04');
    for (const id of ids) await t.queue.cancel(id);
  });
});

describe('GET /v1/push and GET /v1/activity, paged by topic', () => {
  const server = useListeningApp({ push: { allow: ['127.0.0.1:9'] } });

  it('GET /v1/push: limit (default 100, at most 1000) and after; next until the last page; the client and delayq push ls follow it', async () => {
    const { t, url, client } = server;
    const topics = Array.from({ length: 230 }, (_, i) => `hook-${String(i).padStart(3, '0')}`);
    for (const topic of topics) await t.queue.setPush(topic, { url: 'http://127.0.0.1:9/hook' });
    const get = async (query: string): Promise<{ status: number; body: any }> => {
      const answer = await fetch(`${url}/v1/push${query}`);
      return { status: answer.status, body: await answer.json() };
    };
    const first = await get('');
    assert.equal(first.status, 200);
    assert.deepEqual([first.body.subscriptions.length, first.body.subscriptions[0].topic, first.body.next], [100, 'hook-000', 'hook-099']);
    assert.match(first.body.subscriptions[0].secrets[0].secret, /…$/, 'secrets masked');
    const second = await get('?after=hook-099&limit=1000');
    assert.deepEqual([second.body.subscriptions.length, second.body.subscriptions[0].topic, second.body.next], [130, 'hook-100', null]);
    assert.deepEqual((await get('?limit=2&after=hook-0')).body.subscriptions.map((s: { topic: string }) => s.topic), ['hook-000', 'hook-001']);
    for (const [query, code] of [['?limit=0', 'INVALID_OPTION'], ['?limit=1001', 'INVALID_OPTION'], ['?after=a%20b', 'INVALID_TOPIC'], ['?nope=1', 'INVALID_ARGUMENT']] as const) {
      const refused = await get(query);
      assert.deepEqual([refused.status, refused.body.error.code], [400, code], query);
    }
    assert.deepEqual((await client.listPush()).map((s) => s.topic), topics);
    assert.deepEqual(await client.listPushPage({ limit: 3, after: 'hook-227' }).then((p) => [p.subscriptions.map((s) => s.topic), p.next]), [['hook-228', 'hook-229'], null]);
    assert.deepEqual(await t.queue.listPushPage({ limit: 1 }).then((p) => [p.subscriptions.map((s) => s.topic), p.next]), [['hook-000'], 'hook-000']);
    const ls = await runCliProcess(['--server', url, 'push', 'ls', '--limit', '2']);
    assert.equal(ls.code, 0, ls.stderr);
    assert.equal(ls.stdout.trimEnd().split('\n').at(-1), 'more: delayq push ls --after hook-001 --limit 2');
    const all = await runCliProcess(['--server', url, 'push', 'ls', '--json']);
    assert.equal((JSON.parse(all.stdout) as { subscriptions: unknown[] }).subscriptions.length, 230);
    for (const topic of topics) await t.queue.deletePush(topic);
  });
});

describe('GET /v1/activity, paged by topic', () => {
  it('its per-topic parts (counters, last failed push) hold one page of topics by name; the totals are the whole queue\'s', async () => {
    const queue = await DelayQueue.open({ metrics: { registry: new Registry(), maxTopics: 1_000 } });
    const app = await buildApp({ queue, logger: false, checkResponses: true, metrics: queue.metrics });
    try {
      // Counters of 30 topics, failed pushes of 20 (10 of them with counters too).
      for (let i = 0; i < 30; i++) await queue.schedule({ topic: `c-${String(i).padStart(2, '0')}`, delayMs: 60_000 });
      const transport: PushTransport = { checkUrl: async () => undefined, close: async () => undefined, send: async () => ({ kind: 'failure', reason: 'refused' }) };
      const wrapped = queue.metrics!.wrapTransport(transport);
      for (let i = 20; i < 40; i++) await wrapped.send({ url: 'http://127.0.0.1:9/x', body: '{}', headers: { 'delayq-topic': `c-${String(i).padStart(2, '0')}` }, timeoutMs: 1000 });
      const page = async (query: string): Promise<any> => (await send(app, { method: 'GET', url: `/v1/activity${query}` })).body;
      const whole = await page('');
      assert.deepEqual([Object.keys(whole.activity.topics).length, Object.keys(whole.pushFailures).length, whole.topicsNext, whole.topicCount], [30, 20, null, 40]);
      const first = await page('?topicLimit=25');
      assert.deepEqual(Object.keys(first.activity.topics), Array.from({ length: 25 }, (_, i) => `c-${String(i).padStart(2, '0')}`));
      assert.deepEqual(Object.keys(first.pushFailures), Array.from({ length: 5 }, (_, i) => `c-${20 + i}`));
      assert.deepEqual([first.topicsNext, first.topicCount], ['c-24', 40]);
      assert.deepEqual(first.activity.totals, whole.activity.totals, 'totals of the whole queue on every page');
      const second = await page('?topicLimit=25&after=c-24');
      assert.deepEqual([Object.keys(second.activity.topics), Object.keys(second.pushFailures).length, second.topicsNext], [['c-25', 'c-26', 'c-27', 'c-28', 'c-29'], 15, null]);
      for (const [query, code] of [['?topicLimit=0', 'INVALID_OPTION'], ['?topicLimit=10001', 'INVALID_OPTION'], ['?after=a%20b', 'INVALID_TOPIC']] as const)
        assert.equal((await send(app, { method: 'GET', url: `/v1/activity${query}` })).body.error.code, code, query);
    } finally {
      await app.close();
      await queue.close();
    }
  });
});
