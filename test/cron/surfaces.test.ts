/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-argument --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
/**
 * Recurring schedules over HTTP (a real server on port 0), through the client, and with
 * the CLI as real processes: every route, the errors (INVALID_SCHEDULE with the parser's
 * reason, SCHEDULE_NOT_FOUND, nothing stored), and OpenAPI listing the routes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DelayQClient, isDelayQClientError } from '../../src/client/index.js';
import { ManualClock } from '../../src/core/manual-clock.js';
import { ScriptedTransport, testSigner } from '../helpers/push.js';
import { runCliProcess, type CliResult } from '../helpers/service-process.js';
import { openTestApp, send, type TestApp } from '../helpers/service.js';

describe('schedules over HTTP, client and CLI', () => {
  let t: TestApp;
  let url: string;
  let client: DelayQClient;
  const cli = (...args: string[]): Promise<CliResult> => runCliProcess(['--server', url, ...args]);

  before(async () => {
    t = await openTestApp();
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    client = new DelayQClient({ url });
  });
  after(() => t.close());

  it('PUT creates (201), the same PUT changes nothing (200, changed false), GET, list, next, pause, resume, DELETE', async () => {
    const body = { topic: 'reports', cron: '0 9 * * MON-FRI', tz: 'Europe/Berlin', payload: { kind: 'daily' } };
    const created = await send(t.app, { method: 'PUT', url: '/v1/schedules/daily', body });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.changed, true);
    assert.equal(created.body.schedule.tz, 'Europe/Berlin');
    const again = await send(t.app, { method: 'PUT', url: '/v1/schedules/daily', body });
    assert.equal(again.status, 200);
    assert.equal(again.body.changed, false);
    assert.deepEqual(again.body.schedule, created.body.schedule);
    const got = await send(t.app, { method: 'GET', url: '/v1/schedules/daily' });
    assert.deepEqual(got.body.schedule.payload, { kind: 'daily' });
    const list = await send(t.app, { method: 'GET', url: '/v1/schedules' });
    assert.deepEqual(list.body.schedules.map((s: { id: string }) => s.id), ['daily']);
    const next = await send(t.app, { method: 'GET', url: '/v1/schedules/daily/next?n=3' });
    assert.equal(next.body.times.length, 3);
    for (const time of next.body.times as number[]) {
      const wall = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', weekday: 'short' }).format(time);
      assert.match(wall, /^(Mon|Tue|Wed|Thu|Fri) 09:00$/);
    }
    const paused = await send(t.app, { method: 'POST', url: '/v1/schedules/daily/pause' });
    assert.equal(paused.body.schedule.paused, true);
    const resumed = await send(t.app, { method: 'POST', url: '/v1/schedules/daily/resume' });
    assert.equal(resumed.body.schedule.paused, false);
    assert.equal((await send(t.app, { method: 'DELETE', url: '/v1/schedules/daily' })).status, 200);
    assert.equal((await send(t.app, { method: 'DELETE', url: '/v1/schedules/daily' })).body.error.code, 'SCHEDULE_NOT_FOUND');
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/schedules/daily' })).status, 404);
  });

  it('POST /v1/schedules/preview: the times a rule would fire, with no schedule stored; the rule checked as at upsert', async () => {
    // Issue 49: a pattern could be previewed only by creating a schedule.
    const rule = { cron: '0 9 * * MON-FRI', tz: 'Europe/Berlin' };
    const preview = await send(t.app, { method: 'POST', url: '/v1/schedules/preview', body: { ...rule, n: 5 } });
    assert.equal(preview.status, 200, JSON.stringify(preview.body));
    assert.deepEqual(Object.keys(preview.body), ['times']);
    assert.equal(preview.body.times.length, 5);
    for (const time of preview.body.times as number[]) {
      const wall = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', weekday: 'short' }).format(time);
      assert.match(wall, /^(Mon|Tue|Wed|Thu|Fri) 09:00$/);
    }
    assert.deepEqual((await send(t.app, { method: 'GET', url: '/v1/schedules' })).body.schedules, [], 'nothing stored');
    // The same times as a schedule of that rule, through the library and the client too.
    await t.queue.schedules.upsert('twin', { topic: 'reports', ...rule });
    const stored = await t.queue.schedules.next('twin', 5);
    await t.queue.schedules.remove('twin');
    assert.deepEqual(preview.body.times, stored);
    assert.deepEqual(await t.queue.schedules.preview(rule, 5), stored);
    assert.deepEqual(await client.schedules.preview(rule, 5), stored);
    // Default n 10; startAt later than now previews from then; limit caps; an interval.
    assert.equal((await send(t.app, { method: 'POST', url: '/v1/schedules/preview', body: rule })).body.times.length, 10);
    const start = Date.UTC(2031, 2, 30); // Sunday 30 March 2031: Europe/Berlin has no 02:00-02:59
    const spring = await send(t.app, { method: 'POST', url: '/v1/schedules/preview', body: { cron: '30 2 * * *', tz: 'Europe/Berlin', startAt: start, n: 3 } });
    assert.deepEqual(spring.body.times, [Date.UTC(2031, 2, 30, 1, 0), Date.UTC(2031, 2, 31, 0, 30), Date.UTC(2031, 3, 1, 0, 30)], '03:00 CEST after the gap, then 02:30 CEST');
    assert.deepEqual((await send(t.app, { method: 'POST', url: '/v1/schedules/preview', body: { everyMs: 60_000, startAt: start, limit: 2, n: 5 } })).body.times, [start, start + 60_000]);
    // Refused as an upsert would be, with the reason; n and unknown fields too.
    const cases: Array<[unknown, string, string]> = [
      [{ cron: '99 * * * *' }, 'INVALID_SCHEDULE', 'cron: "99 * * * *" is not a valid pattern'],
      [{ cron: '* * * * *', tz: 'Nowhere/City' }, 'INVALID_SCHEDULE', 'unknown time zone'],
      [{}, 'INVALID_SCHEDULE', 'give cron or everyMs'],
      [{ everyMs: 10 }, 'INVALID_SCHEDULE', 'everyMs: must be an integer from 1000'],
      [{ cron: '0 0 30 2 *' }, 'INVALID_SCHEDULE', 'no occurrence from now on'],
      [{ everyMs: 60_000, endAt: Date.now() - 1_000 }, 'INVALID_SCHEDULE', 'endAt: is already past'],
      [{ everyMs: 60_000, n: 0 }, 'INVALID_OPTION', 'n: '],
      [{ everyMs: 60_000, n: 1_001 }, 'INVALID_OPTION', 'n: '],
      [{ everyMs: 60_000, topic: 't' }, 'INVALID_ARGUMENT', 'topic: unknown field'],
    ];
    for (const [body, code, reason] of cases) {
      const answer = await send(t.app, { method: 'POST', url: '/v1/schedules/preview', body });
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.equal(answer.body.error.code, code, JSON.stringify(answer.body));
      assert.ok(answer.body.error.message.includes(reason), answer.body.error.message);
    }
    await assert.rejects(() => client.schedules.preview({ cron: 'nope' }), (e: unknown) => isDelayQClientError(e) && e.code === 'INVALID_SCHEDULE');
    await assert.rejects(t.queue.schedules.preview({ everyMs: 1_000 }, 0), { code: 'INVALID_OPTION' });
    // A GET of /v1/schedules/preview is the schedule named "preview", as ever.
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/schedules/preview' })).body.error.code, 'SCHEDULE_NOT_FOUND');
  });

  it('bad input: 400 INVALID_SCHEDULE with the reason, and nothing stored', async () => {
    const cases: Array<[unknown, string]> = [
      [{ topic: 't', cron: '99 * * * *' }, 'minute'],
      [{ topic: 't', cron: '* * * * *', tz: 'Nowhere/City' }, 'unknown time zone'],
      [{ topic: 't', cron: '* * * * *', everyMs: 5000 }, 'not both'],
      [{ topic: 't' }, 'give cron or everyMs'],
      [{ topic: 't', everyMs: 10 }, 'everyMs'],
      [{ topic: 't', everyMs: 1000, startAt: '2031-01-01T00:00:00Z', endAt: '2030-01-01T00:00:00Z' }, 'after startAt'],
      [{ topic: 't', everyMs: 1000, limit: 'x' }, 'limit'],
      [{ topic: 't', everyMs: 1000, misfire: 'never' }, 'misfire'],
    ];
    for (const [body, reason] of cases) {
      const answer = await send(t.app, { method: 'PUT', url: '/v1/schedules/bad', body });
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.equal(answer.body.error.code, 'INVALID_SCHEDULE', JSON.stringify(answer.body));
      assert.ok(answer.body.error.message.includes(reason), answer.body.error.message);
    }
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/schedules/bad' })).status, 404);
    assert.equal((await send(t.app, { method: 'PUT', url: '/v1/schedules/bad', body: { topic: 't', everyMs: 1000, nope: 1 } })).body.error.code, 'INVALID_ARGUMENT');
    assert.equal((await send(t.app, { method: 'PUT', url: '/v1/schedules/a%20b', body: { topic: 't', everyMs: 1000 } })).body.error.code, 'INVALID_ID');
    assert.equal((await send(t.app, { method: 'POST', url: '/v1/schedules/none/pause' })).status, 404);
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/schedules/none/next' })).body.error.code, 'SCHEDULE_NOT_FOUND');
  });

  it('limits: a 28 MB cron pattern in a bulk PUT is 400 at once with a short answer; long patterns, impossible or out-of-range times and a schedule with no occurrence left are 400 on every route', async () => {
    const huge = `0 0 * * ${'MON,'.repeat(7_000_000)}MON`;
    const started = performance.now();
    const bulk = await send(t.app, { method: 'PUT', url: '/v1/schedules', body: [{ id: 'fine', topic: 't', everyMs: 60_000 }, { id: 'probe', topic: 't', cron: huge }] });
    const took = performance.now() - started;
    assert.equal(bulk.status, 400, JSON.stringify(bulk.body).slice(0, 300));
    assert.equal(bulk.body.error.code, 'INVALID_SCHEDULE');
    assert.match(bulk.body.error.message, /^schedules\[1\]\.cron: must be at most 256 characters/);
    assert.ok(JSON.stringify(bulk.body).length < 500, 'the answer does not echo the pattern');
    assert.ok(took < 5_000, `answered in ${Math.round(took)} ms (was 13 s)`);
    const now = Date.now();
    const cases: Array<[string, unknown, RegExp]> = [
      ['cron of 257 characters', { topic: 't', cron: `0 0 1 1 ${' '.repeat(248)}*` }, /^cron: must be at most 256 characters/],
      ['tz of 65 characters', { topic: 't', cron: '* * * * *', tz: `Europe/${'x'.repeat(58)}` }, /^tz: must be at most 64 characters/],
      ['startAt on 29 February 2031', { topic: 't', everyMs: 1000, startAt: '2031-02-29T00:00:00Z' }, /^startAt: /],
      ['endAt at 24:00', { topic: 't', everyMs: 1000, endAt: '2031-01-01T24:00:00Z' }, /^endAt: /],
      ['startAt 1e20', { topic: 't', everyMs: 1000, startAt: 1e20 }, /^startAt: must be at most 8640000000000000/],
      ['endAt 1e20', { topic: 't', everyMs: 1000, endAt: 1e20 }, /^endAt: must be at most/],
      ['endAt already past', { topic: 't', everyMs: 60_000, endAt: now - 1_000 }, /^endAt: is already past/],
      ['no occurrence before endAt', { topic: 't', cron: '0 0 1 1 *', startAt: now, endAt: now + 60_000 }, /no occurrence from now on/],
    ];
    for (const [name, body, message] of cases) {
      for (const request of [{ method: 'PUT' as const, url: '/v1/schedules/limits', body }, { method: 'PUT' as const, url: '/v1/schedules', body: [{ id: 'limits', ...(body as object) }] }]) {
        const answer = await send(t.app, request);
        assert.equal(answer.status, 400, `${name}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.error.code, 'INVALID_SCHEDULE', name);
        assert.match(answer.body.error.message.replace(/^schedules\[0\]\./, ''), message, name);
      }
      await assert.rejects(client.schedules.upsert('limits', body as never), (e: unknown) => isDelayQClientError(e, 'INVALID_SCHEDULE') && message.test(e.message), name);
    }
    for (const id of ['fine', 'probe', 'limits']) assert.equal((await send(t.app, { method: 'GET', url: `/v1/schedules/${id}` })).status, 404, `${id}: nothing stored`);
  });

  it('PUT /v1/schedules/:id takes a payload as large as a task may carry (1 MiB), as PUT /v1/schedules does; beyond: 413', async () => {
    const startAt = Date.now() + 86_400_000;
    const fits = await send(t.app, { method: 'PUT', url: '/v1/schedules/heavy', body: { topic: 't', everyMs: 60_000, startAt, payload: 'x'.repeat(1_000_000) } });
    assert.equal(fits.status, 201, JSON.stringify(fits.body).slice(0, 200));
    const payload = await send(t.app, { method: 'PUT', url: '/v1/schedules/heavy', body: { topic: 't', everyMs: 60_000, startAt, payload: 'x'.repeat(1024 * 1024) } });
    assert.deepEqual([payload.status, payload.body.error.code], [413, 'PAYLOAD_TOO_LARGE']);
    const body = await send(t.app, { method: 'PUT', url: '/v1/schedules/heavy', body: { topic: 't', everyMs: 60_000, startAt, payload: 'x'.repeat(1_200_000) } });
    assert.deepEqual([body.status, body.body.error.code], [413, 'BODY_TOO_LARGE']);
    assert.equal((await send(t.app, { method: 'DELETE', url: '/v1/schedules/heavy' })).status, 200);
  });

  it('url: 400 INVALID_URL (malformed, SSRF-refused), PUSH_NO_SECRET, nothing stored; then stored and shown', async () => {
    const clock = new ManualClock(Date.now());
    const pushing = await openTestApp({ clock, push: { transport: new ScriptedTransport(clock), signer: testSigner } });
    try {
      const cases: Array<[unknown, string, RegExp]> = [
        [{ topic: 'own', everyMs: 1000, url: 'ftp://x.example.com/' }, 'INVALID_URL', /must be http or https/],
        [{ topic: 'own', everyMs: 1000, url: 'http://10.0.0.1/in' }, 'INVALID_URL', /refused destination 10\.0\.0\.1/],
        [{ topic: 'own', everyMs: 1000, url: 42 }, 'INVALID_URL', /url/],
        [{ topic: 'own', everyMs: 1000, url: 'https://hooks.example.com/cron' }, 'PUSH_NO_SECRET', /no push subscription/],
      ];
      for (const [body, code, message] of cases) {
        const answer = await send(pushing.app, { method: 'PUT', url: '/v1/schedules/pushed', body });
        assert.equal(answer.status, 400, JSON.stringify(body));
        assert.equal(answer.body.error.code, code, JSON.stringify(answer.body));
        assert.match(answer.body.error.message, message);
      }
      assert.equal((await send(pushing.app, { method: 'GET', url: '/v1/schedules/pushed' })).status, 404);
      await send(pushing.app, { method: 'PUT', url: '/v1/topics/own/push', body: { url: 'https://hooks.example.com/topic' } });
      const created = await send(pushing.app, { method: 'PUT', url: '/v1/schedules/pushed', body: { topic: 'own', everyMs: 1_000, url: 'https://hooks.example.com/cron' } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.schedule.url, 'https://hooks.example.com/cron');
      const task = await send(pushing.app, { method: 'GET', url: `/v1/tasks/pushed:${created.body.schedule.lastAt as number}` });
      assert.equal(task.body.url, 'https://hooks.example.com/cron');
    } finally {
      await pushing.close();
    }
  });

  it('PUT /v1/schedules: many in one call (one result each, in order); a bad one is 400 with its index and stores nothing; the client', async () => {
    const body = [
      { id: 'm1', topic: 'many', everyMs: 60_000 },
      { id: 'm2', topic: 'many', cron: '0 9 * * *', tz: 'Europe/Berlin' },
    ];
    const answer = await send(t.app, { method: 'PUT', url: '/v1/schedules', body });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body.results.map((r: { schedule: { id: string }; created: boolean }) => [r.schedule.id, r.created]), [['m1', true], ['m2', true]]);
    const bad = await send(t.app, { method: 'PUT', url: '/v1/schedules', body: [{ id: 'm3', topic: 'many', everyMs: 60_000 }, { id: 'm4', topic: 'many', cron: 'nope' }] });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'INVALID_SCHEDULE');
    assert.match(bad.body.error.message, /^schedules\[1\]\.cron/);
    assert.equal((await send(t.app, { method: 'GET', url: '/v1/schedules/m3' })).status, 404);
    assert.equal((await send(t.app, { method: 'PUT', url: '/v1/schedules', body: { id: 'x' } })).status, 400);
    const viaClient = await client.schedules.upsertMany(body);
    assert.deepEqual(viaClient.map((r) => [r.schedule.id, r.created, r.changed]), [['m1', false, false], ['m2', false, false]]);
    for (const id of ['m1', 'm2']) await client.schedules.remove(id);
  });

  it('the client: upsert, get, list, next, pause, resume, remove; typed errors', async () => {
    const { schedule, changed } = await client.schedules.upsert('beat', { topic: 'tick', everyMs: 60_000 });
    assert.equal(changed, true);
    assert.equal(schedule.everyMs, 60_000);
    assert.equal((await client.schedules.upsert('beat', { topic: 'tick', everyMs: 60_000 })).changed, false);
    assert.equal((await client.schedules.get('beat'))?.id, 'beat');
    assert.equal(await client.schedules.get('none'), null);
    const times = await client.schedules.next('beat', 2);
    assert.equal(times[1]! - times[0]!, 60_000);
    assert.equal((await client.schedules.pause('beat')).paused, true);
    assert.equal((await client.schedules.resume('beat')).paused, false);
    assert.ok((await client.schedules.list()).some((s) => s.id === 'beat'));
    assert.equal(await client.schedules.remove('beat'), true);
    assert.equal(await client.schedules.remove('beat'), false);
    await assert.rejects(() => client.schedules.upsert('x', { topic: 't', cron: 'nope' }), (e: unknown) => isDelayQClientError(e) && e.code === 'INVALID_SCHEDULE');
  });

  it('the CLI: cron set, get, ls, next, pause, resume, rm; errors exit non-zero', async () => {
    const set = await cli('cron', 'set', 'nightly', 'backup', '--cron', '30 2 * * *', '--tz', 'America/New_York', '--payload', '{"full":true}', '--misfire', 'skip', '--json');
    assert.equal(set.code, 0, set.stderr);
    const result = JSON.parse(set.stdout) as { changed: boolean; schedule: { misfire: string; payload: unknown } };
    assert.equal(result.changed, true);
    assert.equal(result.schedule.misfire, 'skip');
    assert.deepEqual(result.schedule.payload, { full: true });
    const [get, ls, next] = await Promise.all([cli('cron', 'get', 'nightly'), cli('cron', 'ls'), cli('cron', 'next', 'nightly', '-n', '2')]);
    assert.match(get.stdout, /^rule\s+30 2 \* \* \* \(America\/New_York\)$/m);
    assert.match(ls.stdout, /^ID\s+TOPIC\s+RULE/);
    assert.equal(next.stdout.trim().split('\n').length, 3, 'a header and two times');
    assert.equal((await cli('cron', 'pause', 'nightly')).code, 0);
    assert.equal((await cli('cron', 'resume', 'nightly')).code, 0);
    assert.equal((await cli('cron', 'rm', 'nightly')).code, 0);
    const [again, bad, badUrl, badStart, ended] = await Promise.all([
      cli('cron', 'rm', 'nightly'),
      cli('cron', 'set', 'x', 't', '--cron', '* * *'),
      cli('cron', 'set', 'y', 't', '--every', '1s', '--url', 'ftp://x.example.com/'),
      cli('cron', 'set', 'z', 't', '--every', '1m', '--start', '2031-02-29T00:00:00Z'),
      cli('cron', 'set', 'z', 't', '--every', '1m', '--end', '2020-01-01T00:00:00Z'),
    ]);
    for (const [result, says] of [[badStart, /INVALID_SCHEDULE: startAt: /], [ended, /INVALID_SCHEDULE: endAt: is already past/]] as const) {
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, says);
    }
    assert.equal(badUrl.code, 1);
    assert.match(badUrl.stderr, /INVALID_URL/);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /SCHEDULE_NOT_FOUND/);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /INVALID_SCHEDULE/);
  });

  it('OpenAPI lists the schedule routes, and the page parameters of GET /v1/schedules', async () => {
    const doc = (await send(t.app, { method: 'GET', url: '/openapi.json' })).body as { paths: Record<string, { get?: { parameters?: Array<{ name: string }> } }> };
    for (const path of ['/v1/schedules', '/v1/schedules/{id}', '/v1/schedules/{id}/pause', '/v1/schedules/{id}/resume', '/v1/schedules/{id}/next', '/v1/schedules/preview']) assert.ok(path in doc.paths, path);
    assert.deepEqual(doc.paths['/v1/schedules']?.get?.parameters?.map((p) => p.name), ['limit', 'after']);
  });

  it('GET /v1/schedules pages by id (default 100, at most 1000, fewer past 4 MiB of payloads); client.list follows the pages, listPage gives one; cron ls shows all or one page', async () => {
    const ids = Array.from({ length: 2_500 }, (_, i) => `p${String(i).padStart(4, '0')}`);
    const far = Date.now() + 30 * 86_400_000;
    const put = await send(t.app, { method: 'PUT', url: '/v1/schedules', body: ids.map((id) => ({ id, topic: 'paged', everyMs: 86_400_000, startAt: far })) });
    assert.equal(put.status, 200);
    try {
      const first = await send(t.app, { method: 'GET', url: '/v1/schedules' });
      assert.deepEqual([first.body.schedules.length, first.body.schedules[0].id, first.body.next], [100, 'p0000', 'p0099']);
      const big = await send(t.app, { method: 'GET', url: '/v1/schedules?limit=1000&after=p0099' });
      assert.deepEqual([big.body.schedules.length, big.body.schedules[0].id, big.body.next], [1_000, 'p0100', 'p1099']);
      const last = await send(t.app, { method: 'GET', url: '/v1/schedules?limit=1000&after=p1999' });
      assert.deepEqual([last.body.schedules.length, last.body.next], [500, null]);
      const bad: Array<[string, string]> = [['limit=1001', 'INVALID_OPTION'], ['limit=0', 'INVALID_OPTION'], ['limit=ten', 'INVALID_OPTION'], ['after=a%20b', 'INVALID_ID'], [`after=${'x'.repeat(201)}`, 'INVALID_ID'], ['sort=id', 'INVALID_ARGUMENT']];
      for (const [query, code] of bad) {
        const answer = await send(t.app, { method: 'GET', url: `/v1/schedules?${query}` });
        assert.deepEqual([answer.status, answer.body.error.code], [400, code], query);
      }

      const all = await client.schedules.list();
      assert.deepEqual(all.map((x) => x.id), ids);
      assert.deepEqual(await client.schedules.listPage({ limit: 2, afterId: 'p2497' }).then((p) => [p.schedules.map((x) => x.id), p.next]), [['p2498', 'p2499'], null]);
      await assert.rejects(client.schedules.listPage({ limit: 5_000 }), (e: unknown) => isDelayQClientError(e, 'INVALID_OPTION'));

      const [every, onePage, lastPage] = await Promise.all([cli('cron', 'ls', '--json'), cli('cron', 'ls', '--limit', '2'), cli('cron', 'ls', '--after', 'p2497', '--json')]);
      assert.equal(every.code, 0, every.stderr);
      assert.equal((JSON.parse(every.stdout) as { schedules: unknown[] }).schedules.length, 2_500);
      assert.match(onePage.stdout, /^ID\s+TOPIC\s+RULE.*\np0000\s.*\np0001\s.*\nmore: delayq cron ls --after p0001 --limit 2\n$/s);
      assert.deepEqual(JSON.parse(lastPage.stdout), { schedules: (await client.schedules.listPage({ afterId: 'p2497' })).schedules, next: null });

      // Payloads of 1,000,002 characters each: a page stops after the one that passes 4 MiB.
      const heavy = ['big0', 'big1', 'big2', 'big3', 'big4', 'big5'].map((id) => ({ id, topic: 'paged', everyMs: 86_400_000, startAt: far, payload: 'x'.repeat(1_000_000) }));
      assert.equal((await send(t.app, { method: 'PUT', url: '/v1/schedules', body: heavy })).status, 200);
      const heavyPage = await send(t.app, { method: 'GET', url: '/v1/schedules?limit=1000' });
      assert.deepEqual([heavyPage.body.schedules.map((x: { id: string }) => x.id), heavyPage.body.next], [['big0', 'big1', 'big2', 'big3', 'big4'], 'big4']);
      assert.equal((await client.schedules.list()).length, 2_506);
    } finally {
      for (const id of [...ids, 'big0', 'big1', 'big2', 'big3', 'big4', 'big5']) await t.queue.schedules.remove(id);
    }
  });
});
