/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
/**
 * GET /v1/stats answers its per-topic parts a page of topics at a time (src/server/stats-page.ts):
 * the page function on its own, then the route (inject), the client and the CLI against a
 * listening app with 2,500 topics.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DelayQClient, isDelayQClientError } from '../../src/client/index.js';
import type { QueueStats } from '../../src/engine/queue-types.js';
import { DEFAULT_STATS_TOPICS, MAX_STATS_TOPICS, statsPage as pageOf } from '../../src/server/stats-page.js';
import { runCliProcess } from '../helpers/service-process.js';
import { openTestApp, send, type TestApp } from '../helpers/service.js';

const zeroCounts = { pending: 0, reserved: 0, completed: 0, dead: 0, cancelled: 0 };
const lateness = { count: 0, p50: 0, p99: 0, p999: 0, max: 0 };

/** A page as JSON sees it: its per-topic parts have no prototype (no topic reaches Object.prototype). */
const statsPage = (...args: Parameters<typeof pageOf>): ReturnType<typeof pageOf> => JSON.parse(JSON.stringify(pageOf(...args))) as ReturnType<typeof pageOf>;

describe('statsPage', () => {
  it('answers its per-topic parts without a prototype: a topic named __proto__ is a topic', () => {
    const page = pageOf({ ...stats, topics: JSON.parse('{"__proto__":{"pending":1},"constructor":{"pending":2}}') as QueueStats['topics'], ready: {} }, { topicLimit: 10, after: null });
    assert.equal(Object.getPrototypeOf(page.topics), null);
    assert.equal(Object.getPrototypeOf(page.ready), null);
    assert.deepEqual(Object.keys(page.topics), ['__proto__', 'constructor']);
    assert.equal(page.ready['constructor'], undefined);
    assert.equal(JSON.stringify(page.topics), '{"__proto__":{"pending":1},"constructor":{"pending":2}}');
  });

  const stats: QueueStats = {
    store: 'memory',
    counts: { ...zeroCounts, pending: 4 },
    topics: { a: { pending: 1 }, c: { pending: 2 }, d: { pending: 1 } },
    unavailable: [],
    timers: 3,
    ready: { a: 1, c: 2 },
    oldestReady: { c: 5 },
    waiting: 0,
    paused: [],
    limits: {},
    throttled: {},
    lateness,
    push: { topics: { b: { sent: 1, ok: 1, failed: {}, deferred: 0, noSlot: 0 } }, origins: { 'https://x.example.com': { sent: 1, ok: 1, failed: {}, deferred: 0, noSlot: 0, breaker: { state: 'closed', consecutiveFailures: 0, openUntil: null } } } },
  };

  it('pages the topics of every per-topic part by name; totals and origins stay whole', () => {
    const first = statsPage(stats, { topicLimit: 2, after: null });
    assert.deepEqual(first.topics, { a: { pending: 1 } });
    assert.deepEqual(first.ready, { a: 1 });
    assert.deepEqual(first.push?.topics, { b: stats.push!.topics['b'] });
    assert.deepEqual([first.topicsNext, first.topicCount, first.readyTotal, first.timers, first.counts.pending], ['b', 4, 3, 3, 4]);
    assert.deepEqual(first.push?.origins, stats.push!.origins);
    const second = statsPage(stats, { topicLimit: 2, after: 'b' });
    assert.deepEqual([second.topics, second.ready, second.oldestReady, second.push?.topics, second.topicsNext], [{ c: { pending: 2 }, d: { pending: 1 } }, { c: 2 }, { c: 5 }, {}, null]);
    assert.deepEqual(statsPage(stats, { topicLimit: 2, after: 'zz' }).topics, {});
    assert.equal(statsPage(stats, { topicLimit: 2, after: 'zz' }).topicsNext, null);
    const all = statsPage(stats, { topicLimit: DEFAULT_STATS_TOPICS, after: null });
    assert.deepEqual([all.topics, all.ready, all.oldestReady, all.topicsNext], [stats.topics, stats.ready, stats.oldestReady, null]);
  });

  it('pages the flow limits and throttled counts like the other per-topic parts; a limited topic with no task is a topic', () => {
    const limited: QueueStats = { ...stats, limits: { a: { rate: 5, periodMs: 1000, burst: 5, concurrency: null }, e: { rate: null, periodMs: 1000, burst: 1, concurrency: 2 } }, throttled: { c: 3, f: 1 } };
    const first = statsPage(limited, { topicLimit: 3, after: null });
    assert.deepEqual([Object.keys(first.limits), first.throttled, first.topicsNext, first.topicCount], [['a'], { c: 3 }, 'c', 6]);
    const second = statsPage(limited, { topicLimit: 3, after: 'c' });
    assert.deepEqual([second.limits, second.throttled, second.topicsNext], [{ e: limited.limits['e'] }, { f: 1 }, null]);
  });
});

describe('GET /v1/stats with 2,500 topics: route, client and CLI', () => {
  let t: TestApp;
  let url: string;
  let client: DelayQClient;
  const topics = Array.from({ length: 2_500 }, (_, i) => `t${String(i).padStart(4, '0')}`);

  before(async () => {
    t = await openTestApp();
    await t.queue.scheduleMany(topics.map((topic) => ({ topic })));
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    client = new DelayQClient({ url });
  });
  after(() => t.close());

  it(`answers the first ${DEFAULT_STATS_TOPICS} topics by default, a page with topicLimit and after, the totals on every page`, async () => {
    const first = await send(t.app, { method: 'GET', url: '/v1/stats' });
    assert.equal(first.status, 200);
    assert.equal(Object.keys(first.body.topics).length, DEFAULT_STATS_TOPICS);
    assert.deepEqual([first.body.topicsNext, first.body.topicCount, first.body.counts.pending, first.body.readyTotal], ['t0999', 2_500, 2_500, 2_500]);
    assert.equal(Object.keys(first.body.ready).length, DEFAULT_STATS_TOPICS);
    const last = await send(t.app, { method: 'GET', url: '/v1/stats?topicLimit=10&after=t2495' });
    assert.deepEqual([Object.keys(last.body.topics), last.body.topicsNext], [['t2496', 't2497', 't2498', 't2499'], null]);
    const whole = await send(t.app, { method: 'GET', url: `/v1/stats?topicLimit=${MAX_STATS_TOPICS}` });
    assert.deepEqual([Object.keys(whole.body.topics).length, whole.body.topicsNext], [2_500, null]);
    const bad: Array<[string, string]> = [['topicLimit=0', 'INVALID_OPTION'], [`topicLimit=${MAX_STATS_TOPICS + 1}`, 'INVALID_OPTION'], ['topicLimit=many', 'INVALID_OPTION'], ['after=a%20b', 'INVALID_TOPIC'], [`after=${'x'.repeat(201)}`, 'INVALID_TOPIC'], ['topics=all', 'INVALID_ARGUMENT']];
    for (const [query, code] of bad) {
      const answer = await send(t.app, { method: 'GET', url: `/v1/stats?${query}` });
      assert.deepEqual([answer.status, answer.body.error.code], [400, code], query);
    }
  });

  it('the client pages with stats({topicLimit, after}); following topicsNext visits every topic once', async () => {
    const seen: string[] = [];
    let afterTopic: string | undefined;
    for (;;) {
      const page = await client.stats({ topicLimit: 700, ...(afterTopic !== undefined ? { after: afterTopic } : {}) });
      seen.push(...Object.keys(page.topics));
      if (page.topicsNext === null) break;
      afterTopic = page.topicsNext;
    }
    assert.deepEqual(seen, topics);
    await assert.rejects(client.stats({ topicLimit: 0 }), (e: unknown) => isDelayQClientError(e, 'INVALID_OPTION'));
  });

  it('delayq stats shows a page and says how to get the next; --after and --topic-limit page', async () => {
    const [human, json] = await Promise.all([
      runCliProcess(['--server', url, 'stats', '--topic-limit', '3']),
      runCliProcess(['--server', url, 'stats', '--after', 't2498', '--json']),
    ]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /\nt0000\s.*\nt0001\s.*\nt0002\s.*\n\nmore topics \(2500 in all\): delayq stats --after t0002 --topic-limit 3\n$/s);
    const page = JSON.parse(json.stdout) as { topics: Record<string, unknown>; topicsNext: string | null };
    assert.deepEqual([Object.keys(page.topics), page.topicsNext], [['t2499'], null]);
  });
});
