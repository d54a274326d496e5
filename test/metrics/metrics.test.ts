import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import type { SharedDispatch } from '../../src/core/ports/index.js';
import type { PushRequest, PushResponse, PushTransport } from '../../src/core/push.js';
import { MAX_PUSH_FAILURE_TOPICS, QueueMetrics } from '../../src/metrics/prometheus.js';
import { DelayQueue } from '../../src/open-queue.js';
import { buildApp } from '../../src/server/app.js';
import { T0, flush, openManual } from '../helpers/engine.js';
import { send } from '../helpers/service.js';
import { ManualPlanning } from '../helpers/manual-planning.js';
import { dropSchema, freshSchema, storeUrl } from '../helpers/postgres.js';
import { redisSkip, startRedis } from '../helpers/redis-servers.js';

/** The value of one sample line (name + exact label set) in the text format, or undefined. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

test('counters by topic, lateness, gauges by state and topic, store durations', async () => {
  const registry = new Registry();
  const { q, clock } = await openManual({ metrics: { registry } });
  try {
    await q.scheduleMany([
      { id: 'a1', topic: 'a', delayMs: 1_000 },
      { id: 'a2', topic: 'a', delayMs: 1_000, maxAttempts: 1 },
      { id: 'a3', topic: 'a', delayMs: 60_000 },
      { id: 'b1', topic: 'b', delayMs: 1_000 },
    ]);
    await q.schedule({ id: 'a1', topic: 'a', delayMs: 5 }); // exists: not counted
    assert.equal(await q.cancel('a3'), true);
    clock.advance(1_250);
    await flush();
    const got = await q.reserve('a', { max: 10 });
    assert.deepEqual(got.map((d) => d.id).sort(), ['a1', 'a2']);
    const byId = new Map(got.map((d) => [d.id, d]));
    await q.ack('a1', byId.get('a1')!.receipt);
    assert.deepEqual(await q.nack('a2', byId.get('a2')!.receipt, { error: 'boom' }), { state: 'dead' });
    const [b1] = await q.reserve('b');
    await q.nack(b1!.id, b1!.receipt, { delayMs: 10 });

    const text = await registry.metrics();
    assert.equal(sample(text, 'delayq_tasks_scheduled_total{topic="a"}'), 3);
    assert.equal(sample(text, 'delayq_tasks_scheduled_total{topic="b"}'), 1);
    assert.equal(sample(text, 'delayq_tasks_cancelled_total{topic="a"}'), 1);
    assert.equal(sample(text, 'delayq_tasks_delivered_total{topic="a"}'), 2);
    assert.equal(sample(text, 'delayq_tasks_acked_total{topic="a"}'), 1);
    assert.equal(sample(text, 'delayq_tasks_dead_total{topic="a"}'), 1);
    assert.equal(sample(text, 'delayq_tasks_failed_total{topic="b"}'), 1);
    // Delivered 250 ms after runAt (the clock jumped): in the 0.25 s bucket, not the 0.1 s one; by topic.
    assert.equal(sample(text, 'delayq_delivery_lateness_seconds_count{topic="a"}'), 2);
    assert.equal(sample(text, 'delayq_delivery_lateness_seconds_count{topic="b"}'), 1);
    assert.equal(sample(text, 'delayq_delivery_lateness_seconds_bucket{le="0.1",topic="a"}'), 0);
    assert.equal(sample(text, 'delayq_delivery_lateness_seconds_bucket{le="0.25",topic="a"}'), 2);
    assert.equal(sample(text, 'delayq_delivery_lateness_seconds_bucket{le="0.25",topic="b"}'), 1);
    assert.equal(sample(text, 'delayq_delivery_lateness_seconds_count'), undefined, 'no unlabelled series');
    assert.equal(sample(text, 'delayq_tasks{state="completed",topic="a"}'), 1);
    assert.equal(sample(text, 'delayq_tasks{state="dead",topic="a"}'), 1);
    assert.equal(sample(text, 'delayq_tasks{state="cancelled",topic="a"}'), 1);
    assert.equal(sample(text, 'delayq_tasks{state="pending",topic="b"}'), 1);
    // A topic the store counts has a series for every state: 0 where it holds none.
    assert.equal(sample(text, 'delayq_tasks{state="pending",topic="a"}'), 0);
    assert.equal(sample(text, 'delayq_tasks{state="reserved",topic="a"}'), 0);
    assert.equal(sample(text, 'delayq_tasks{state="completed",topic="b"}'), 0);
    assert.equal(sample(text, 'delayq_ready_tasks{topic="a"}'), 0);
    assert.equal(sample(text, 'delayq_oldest_ready_age_seconds{topic="a"}'), 0);
    assert.equal(sample(text, 'delayq_wheel_timers'), 1);
    assert.equal(sample(text, 'delayq_reserve_waiting'), 0);
    assert.equal(sample(text, 'delayq_shards_unavailable'), 0);
    assert.ok((sample(text, 'delayq_store_operation_duration_seconds_count{operation="schedule"}') ?? 0) >= 2);
    assert.ok((sample(text, 'delayq_store_operation_duration_seconds_count{operation="ack"}') ?? 0) >= 1);
    // No default process metrics unless asked for.
    assert.equal(text.includes('process_cpu_seconds_total'), false);
  } finally {
    await q.close();
  }
});

test('the work loop counts acks and failures with their topic; long-polls waiting and ready tasks are gauges', async () => {
  const registry = new Registry();
  const { q, clock } = await openManual({ metrics: { registry } });
  try {
    const waiting = q.reserve('idle', { waitMs: 10_000 });
    await flush();
    assert.equal(sample(await registry.metrics(), 'delayq_reserve_waiting'), 1);
    await q.scheduleMany([
      { id: 'w1', topic: 'w', delayMs: 10 },
      { id: 'w2', topic: 'w', delayMs: 10 },
      { id: 'r1', topic: 'r', delayMs: 10 },
    ]);
    const worker = q.work('w', async (task) => {
      if (task.id === 'w2') throw new Error('no');
    });
    clock.advance(20);
    await flush();
    const text = await registry.metrics();
    assert.equal(sample(text, 'delayq_tasks_acked_total{topic="w"}'), 1);
    assert.equal(sample(text, 'delayq_tasks_failed_total{topic="w"}'), 1);
    assert.equal(sample(text, 'delayq_ready_tasks{topic="r"}'), 1);
    // The longest-waiting ready task of a topic, for the dashboard's topics page.
    assert.deepEqual({ ...(await q.stats()).oldestReady }, { r: T0 + 10 });
    await worker.close();
    clock.advance(10_000);
    assert.deepEqual(await waiting, []);
  } finally {
    await q.close();
  }
});

test('a drained topic reads 0, not its last value; the oldest ready task\'s age by topic', async () => {
  const registry = new Registry();
  const { q, clock } = await openManual({ metrics: { registry } });
  try {
    await q.scheduleMany([
      { id: 'd1', topic: 'd', delayMs: 10 },
      { id: 'd2', topic: 'd', delayMs: 20 },
      { id: 'd3', topic: 'd', delayMs: 30 },
    ]);
    let text = await registry.metrics();
    assert.equal(sample(text, 'delayq_tasks{state="pending",topic="d"}'), 3);
    assert.equal(sample(text, 'delayq_ready_tasks{topic="d"}'), 0);
    assert.equal(sample(text, 'delayq_oldest_ready_age_seconds{topic="d"}'), 0);
    // Due, nobody reserving: the oldest (runAt T0 + 10) has waited 5 s at T0 + 5 010.
    clock.advance(5_010);
    await flush();
    text = await registry.metrics();
    assert.equal(sample(text, 'delayq_ready_tasks{topic="d"}'), 3);
    assert.equal(sample(text, 'delayq_oldest_ready_age_seconds{topic="d"}'), 5);
    clock.advance(1_000);
    assert.equal(sample(await registry.metrics(), 'delayq_oldest_ready_age_seconds{topic="d"}'), 6, 'read from the clock at scrape time');
    // Drained: every gauge of the topic drops to 0 (the series stay, the values go).
    const got = await q.reserve('d', { max: 10 });
    assert.equal(got.length, 3);
    for (const d of got) await q.ack(d.id, d.receipt);
    text = await registry.metrics();
    for (const state of ['pending', 'reserved', 'dead', 'cancelled']) assert.equal(sample(text, `delayq_tasks{state="${state}",topic="d"}`), 0, state);
    assert.equal(sample(text, 'delayq_tasks{state="completed",topic="d"}'), 3);
    assert.equal(sample(text, 'delayq_ready_tasks{topic="d"}'), 0);
    assert.equal(sample(text, 'delayq_oldest_ready_age_seconds{topic="d"}'), 0);
  } finally {
    await q.close();
  }
});

test('a cancel and a death count under the task\'s own topic on SQLite, for tasks due beyond the loaded window', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'delayq-metrics-'));
  const registry = new Registry();
  // The SQLite store commits on its clock: the system one here.
  const q = await DelayQueue.open({ store: `sqlite:${join(dir, 'm.db')}`, metrics: { registry } });
  try {
    // An hour out: no timer in the wheel, so the engine holds no topic for them.
    await q.scheduleMany([
      { id: 'f1', topic: 'far', delayMs: 3_600_000 },
      { id: 'f2', topic: 'far', delayMs: 3_600_000 },
      { id: 'f3', topic: 'far2', delayMs: 3_600_000 },
    ]);
    assert.equal(await q.cancel('f1'), true);
    assert.deepEqual(await q.cancelMany(['f2', 'f3', 'nope']), [true, true, false]);
    // A reservation of an hour outlives the window too: its nack is counted under the store's topic.
    await q.schedule({ id: 'd1', topic: 'doomed', maxAttempts: 1, ttrMs: 3_600_000 });
    const [got] = await q.reserve('doomed', { waitMs: 5_000 });
    assert.equal(got?.id, 'd1');
    assert.deepEqual(await q.nack(got.id, got.receipt), { state: 'dead' });
    const text = await registry.metrics();
    assert.equal(sample(text, 'delayq_tasks_cancelled_total{topic="far"}'), 2);
    assert.equal(sample(text, 'delayq_tasks_cancelled_total{topic="far2"}'), 1);
    assert.equal(sample(text, 'delayq_tasks_dead_total{topic="doomed"}'), 1);
    assert.equal(text.includes('topic="_unknown"'), false, 'nothing counted under _unknown');
  } finally {
    await q.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Acks by bare id (HTTP, `q.ack`) of reservations an hour long: longer than the loaded
 * window, so the engine has no timer of theirs, and after a restart none at all. Each is
 * counted under its task's topic, answered by the store; an ack sent again is counted once.
 */
async function acksOfUnloadedReservations(open: (registry: Registry) => Promise<DelayQueue>, restart: boolean, via: 'library' | 'http' = 'library'): Promise<void> {
  let registry = new Registry();
  let q = await open(registry);
  try {
    await q.scheduleMany([
      { id: 'l1', topic: 'long', ttrMs: 3_600_000 },
      { id: 'l2', topic: 'long', ttrMs: 3_600_000 },
      { id: 'o1', topic: 'other.topic', ttrMs: 3_600_000 },
    ]);
    const got = [...(await q.reserve('long', { max: 2, waitMs: 5_000 })), ...(await q.reserve('other.topic', { waitMs: 5_000 }))];
    assert.deepEqual(got.map((d) => d.id).sort(), ['l1', 'l2', 'o1']);
    if (restart) {
      await q.close();
      registry = new Registry();
      q = await open(registry);
    }
    const [l1, l2, o1] = ['l1', 'l2', 'o1'].map((id) => got.find((d) => d.id === id)!);
    const batch = [l2!, o1!, { id: 'o1', receipt: o1!.receipt }].map(({ id, receipt }) => ({ id, receipt }));
    let text: string;
    if (via === 'library') {
      await q.ack(l1!.id, l1!.receipt);
      await q.ack(l1!.id, l1!.receipt); // its reply was lost: sent again, succeeds, not counted again
      assert.deepEqual(await q.ackMany(batch), ['acked', 'acked', 'acked']);
      text = await registry.metrics();
    } else {
      // The service's routes, by bare id, and the scrape the service answers.
      const app = await buildApp({ queue: q, logger: false, checkResponses: true, metrics: q.metrics });
      try {
        for (let i = 0; i < 2; i++) assert.deepEqual((await send(app, { method: 'POST', url: `/v1/tasks/${l1!.id}/ack`, body: { receipt: l1!.receipt } })).body, { acked: true });
        const answer = await send<{ results: { acked: boolean }[] }>(app, { method: 'POST', url: '/v1/tasks/ack', body: { acks: batch } });
        assert.deepEqual(answer.body.results.map((r) => r.acked), [true, true, true]);
        text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      } finally {
        await app.close();
      }
    }
    assert.equal(sample(text, 'delayq_tasks_acked_total{topic="long"}'), 2);
    assert.equal(sample(text, 'delayq_tasks_acked_total{topic="other.topic"}'), 1, 'the same delivery twice in one batch is counted once');
    assert.equal(text.includes('topic="_unknown"'), false, 'nothing counted under _unknown');
  } finally {
    await q.close();
  }
}

test('an ack of a reservation whose timer is not loaded counts under its topic, once (memory)', async () => {
  await acksOfUnloadedReservations((registry) => DelayQueue.open({ metrics: { registry } }), false);
});

for (const restart of [false, true]) {
  test(`an ack of a reservation whose timer is not loaded counts under its topic, once (SQLite${restart ? ', after a restart' : ''})`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'delayq-metrics-'));
    try {
      await acksOfUnloadedReservations((registry) => DelayQueue.open({ store: `sqlite:${join(dir, 'a.db')}`, metrics: { registry } }), restart);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('an ack of a reservation whose timer is not loaded counts under its topic, once (SQLite, over HTTP, after a restart)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'delayq-metrics-'));
  try {
    await acksOfUnloadedReservations((registry) => DelayQueue.open({ store: `sqlite:${join(dir, 'a.db')}`, metrics: { registry } }), true, 'http');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

for (const restart of [false, true]) {
  test(`an ack of a reservation whose timer is not loaded counts under its topic, once (Redis${restart ? ', after a restart' : ', over HTTP'})`, { skip: redisSkip() }, async () => {
    const server = await startRedis();
    try {
      await acksOfUnloadedReservations((registry) => DelayQueue.open({ store: server.url, storeOptions: { prefix: 'acks', shards: 4 }, metrics: { registry } }), restart, restart ? 'library' : 'http');
    } finally {
      await server.stop();
      server.remove();
    }
  });

  test(`an ack of a reservation whose timer is not loaded counts under its topic, once (PostgreSQL${restart ? ', after a restart' : ''}, over HTTP)`, async () => {
    const schema = freshSchema('acks');
    try {
      await acksOfUnloadedReservations((registry) => DelayQueue.open({ store: storeUrl(schema), metrics: { registry } }), restart, 'http');
    } finally {
      await dropSchema(schema);
    }
  });
}

test('schedules by state, counted from the engine\'s list at each scrape (no store read); occurrences count as tasks created', async () => {
  const registry = new Registry();
  const { q, clock } = await openManual({ metrics: { registry } });
  try {
    let text = await registry.metrics();
    for (const state of ['active', 'paused', 'ended']) assert.equal(sample(text, `delayq_schedules{state="${state}"}`), 0);
    await q.schedules.upsert('nightly', { topic: 'backup', cron: '30 2 * * *', tz: 'Europe/Berlin' });
    await q.schedules.upsert('minutely', { topic: 'ping', everyMs: 60_000 });
    await q.schedules.upsert('once', { topic: 'ping', everyMs: 60_000, limit: 1 }); // ended once its one occurrence exists
    // An occurrence is created within scheduleLeadMs of its time: a second before the next
    // whole minute, the minutely ones exist and the nightly one does not yet.
    clock.advance(Math.ceil((clock.now() + 2_000) / 60_000) * 60_000 - 1_000 - clock.now());
    await flush();
    // Occurrences are ordinary tasks, counted as created.
    text = await registry.metrics();
    const created = async (...ids: string[]): Promise<number> => (await Promise.all(ids.map(async (id) => (await q.schedules.get(id))!.count))).reduce((a, b) => a + b, 0);
    assert.equal(await created('nightly'), 0);
    assert.equal(sample(text, 'delayq_tasks_scheduled_total{topic="backup"}') ?? 0, 0);
    assert.equal(sample(text, 'delayq_tasks_scheduled_total{topic="ping"}'), await created('minutely', 'once'));
    assert.ok((await created('minutely', 'once')) >= 2);
    await q.schedules.pause('minutely');
    text = await registry.metrics();
    assert.equal(sample(text, 'delayq_schedules{state="active"}'), 1);
    assert.equal(sample(text, 'delayq_schedules{state="paused"}'), 1);
    assert.equal(sample(text, 'delayq_schedules{state="ended"}'), 1);
    await q.schedules.resume('minutely');
    await q.schedules.remove('once');
    const reads = (t: string): number => sample(t, 'delayq_store_operation_duration_seconds_count{operation="listSchedules"}') ?? 0;
    const before = reads(await registry.metrics());
    text = await registry.metrics();
    assert.equal(sample(text, 'delayq_schedules{state="active"}'), 2);
    assert.equal(sample(text, 'delayq_schedules{state="paused"}'), 0);
    assert.equal(sample(text, 'delayq_schedules{state="ended"}'), 0);
    assert.equal(reads(text), before, 'a scrape lists no schedule from the store');
    assert.ok(before >= 1, 'the loop\'s own reads are timed');
  } finally {
    await q.close();
  }
});

test('topic labels are capped: later topics count under topic="_other"', async () => {
  const registry = new Registry();
  const { q } = await openManual({ metrics: { registry, maxTopics: 2 } });
  try {
    for (const topic of ['t1', 't2', 't3', 't4']) await q.schedule({ topic, delayMs: 1_000 });
    const text = await registry.metrics();
    assert.equal(sample(text, 'delayq_tasks_scheduled_total{topic="t1"}'), 1);
    assert.equal(sample(text, 'delayq_tasks_scheduled_total{topic="t2"}'), 1);
    assert.equal(sample(text, 'delayq_tasks_scheduled_total{topic="_other"}'), 2);
    assert.equal(sample(text, 'delayq_tasks{state="pending",topic="_other"}'), 2);
    assert.equal(sample(text, 'delayq_tasks{state="dead",topic="_other"}'), 0);
    assert.equal(sample(text, 'delayq_ready_tasks{topic="_other"}'), 0);
    assert.equal(sample(text, 'delayq_oldest_ready_age_seconds{topic="_other"}'), 0);
    assert.equal(text.includes('topic="t3"'), false);
    assert.equal(text.includes('topic="t4"'), false);
  } finally {
    await q.close();
  }
});

test('push requests are counted by topic and status class, timed, and the last failure kept', async () => {
  const metrics = new QueueMetrics({ registry: new Registry() });
  const answers: PushResponse[] = [
    { kind: 'response', status: 204, retryAfterMs: null, bodyStart: '' },
    { kind: 'response', status: 503, retryAfterMs: null, bodyStart: 'busy' },
    { kind: 'failure', reason: 'connect ECONNREFUSED' },
  ];
  const transport: PushTransport = { checkUrl: async () => undefined, close: async () => undefined, send: async () => answers.shift()! };
  const wrapped = metrics.wrapTransport(transport, () => 42);
  const request = (topic: string): PushRequest => ({ url: 'http://127.0.0.1:9/x', body: '{}', headers: { 'delayq-topic': topic }, timeoutMs: 1000 });
  await wrapped.send(request('p'));
  await wrapped.send(request('p'));
  await wrapped.send(request('p'));
  const text = await metrics.registry.metrics();
  assert.equal(sample(text, 'delayq_push_requests_total{topic="p",status_class="2xx"}'), 1);
  assert.equal(sample(text, 'delayq_push_requests_total{topic="p",status_class="5xx"}'), 1);
  assert.equal(sample(text, 'delayq_push_requests_total{topic="p",status_class="failure"}'), 1);
  assert.equal(sample(text, 'delayq_push_request_duration_seconds_count{topic="p"}'), 3);
  assert.deepEqual(metrics.lastPushFailures().get('p'), { at: 42, error: 'connect ECONNREFUSED' });
});

test('the last failed push is kept for the 10,000 topics that failed last: the oldest goes first, a topic failing again moves up', async () => {
  const metrics = new QueueMetrics({ registry: new Registry() });
  const transport: PushTransport = { checkUrl: async () => undefined, close: async () => undefined, send: async () => ({ kind: 'failure', reason: 'refused' }) };
  let clock = 0;
  const wrapped = metrics.wrapTransport(transport, () => ++clock);
  const fail = (topic: string): Promise<PushResponse> => wrapped.send({ url: 'http://127.0.0.1:9/x', body: '{}', headers: { 'delayq-topic': topic }, timeoutMs: 1000 });
  for (let i = 0; i < MAX_PUSH_FAILURE_TOPICS; i++) await fail(`t${i}`);
  await fail('t0'); // t0 failed again: now the latest, t1 the oldest
  await fail('new');
  const failures = metrics.lastPushFailures();
  assert.equal(failures.size, MAX_PUSH_FAILURE_TOPICS);
  assert.equal(failures.has('t1'), false, 'the one that failed longest ago went');
  assert.deepEqual([failures.get('t0')?.at, failures.get('new')?.at], [MAX_PUSH_FAILURE_TOPICS + 1, MAX_PUSH_FAILURE_TOPICS + 2]);
});

test('GET /metrics needs the token unless metricsPublic; default process metrics when asked', async () => {
  const registry = new Registry();
  const { q } = await openManual({ metrics: { registry, defaultMetrics: true } });
  const closed = await buildApp({ queue: q, logger: false, token: 'sekret', metrics: q.metrics });
  const open = await buildApp({ queue: q, logger: false, token: 'sekret', metrics: q.metrics, metricsPublic: true });
  const none = await buildApp({ queue: q, logger: false });
  try {
    assert.equal((await closed.inject({ method: 'GET', url: '/metrics' })).statusCode, 401);
    const ok = await closed.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer sekret' } });
    assert.equal(ok.statusCode, 200);
    assert.match(String(ok.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.match(ok.body, /^process_cpu_seconds_total /m);
    // prom-client's three gauges named like counters are left out; their by-type gauges stay.
    assert.doesNotMatch(ok.body, /^nodejs_active_(handles|requests|resources)_total/m);
    assert.match(ok.body, /^# TYPE nodejs_active_handles gauge$/m);
    assert.match(ok.body, /^# TYPE nodejs_active_requests gauge$/m);
    assert.match(ok.body, /^# TYPE delayq_delivery_lateness_seconds histogram$/m);
    assert.equal((await open.inject({ method: 'GET', url: '/metrics' })).statusCode, 200);
    const missing = await send<{ error: { code: string } }>(none, { method: 'GET', url: '/metrics' });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'ROUTE_NOT_FOUND');
  } finally {
    await closed.close();
    await open.close();
    await none.close();
    await q.close();
  }
});

test('every operation of the store port is timed, the role objects\' and the coordination part\'s promote included', async () => {
  const { MemoryStore } = await import('../../src/stores/memory/memory-store.js');
  const { STORE_ROLE_OPERATIONS } = await import('../../src/core/ports/index.js');
  const { TIMED_STORE_OPERATIONS } = await import('../../src/metrics/prometheus.js');
  const registry = new Registry();
  const metrics = new QueueMetrics({ registry });
  const store = new MemoryStore();
  const wrapped = metrics.wrapStore(store);
  // The port's lists (complete by compile-time checks in src/core/ports/) are what is timed.
  const places: [object, object, readonly string[]][] = [];
  for (const role of ['tasks', 'schedules', 'push', 'topics'] as const) places.push([store[role], wrapped[role], STORE_ROLE_OPERATIONS[role]]);
  assert.deepEqual(new Set(TIMED_STORE_OPERATIONS), new Set(places.flatMap(([, , operations]) => operations)));
  assert.equal(TIMED_STORE_OPERATIONS.length, 45);
  for (const [target, timed, operations] of places)
    for (const operation of operations) {
      const original = (target as Record<string, unknown>)[operation];
      assert.equal(typeof original, 'function', `${operation} is a method of the memory store`);
      assert.notEqual((timed as Record<string, unknown>)[operation], original, `${operation} is wrapped`);
    }
  // The three the old hand-kept list missed.
  await wrapped.schedules.putSchedules([]);
  await wrapped.schedules.getSchedules([]);
  await wrapped.tasks.defer({ id: 'none', receipt: 'r', runAt: T0, now: T0 });
  const text = await registry.metrics();
  for (const operation of ['putSchedules', 'getSchedules', 'defer']) assert.match(text, new RegExp(`delayq_store_operation_duration_seconds_count\\{operation="${operation}"\\} 1`));
  await store.close();
});

test('a shared store\'s promotions are timed through store.coordination', async () => {
  const { MemoryStore } = await import('../../src/stores/memory/memory-store.js');
  class PromotingStore extends MemoryStore implements SharedDispatch {
    override readonly coordination: SharedDispatch = this;
    readonly schedulePlanning = new ManualPlanning(1, 0);
    promotions = 0;
    async promote(): Promise<void> {
      this.promotions++;
    }
    async reserveReady(): Promise<never[]> {
      return [];
    }
    onRemoteTimer(): void {}
  }
  const registry = new Registry();
  const store = new PromotingStore();
  const wrapped = new QueueMetrics({ registry }).wrapStore(store);
  await wrapped.coordination?.promote([], T0);
  assert.equal(store.promotions, 1);
  assert.match(await registry.metrics(), /delayq_store_operation_duration_seconds_count\{operation="promote"\} 1/);
  await store.close();
});

test('metrics are built before the queue: the queue holds them from its construction, and their gauges read that one queue', async () => {
  const registry = new Registry();
  const { q } = await openManual({ metrics: { registry } });
  try {
    assert.ok(q.metrics !== null);
    // The gauges were registered by the queue's constructor: a scrape right after open reads it.
    assert.equal(sample(await registry.metrics(), 'delayq_wheel_timers'), 0);
    assert.throws(() => q.metrics!.registerGauges(q), /the gauges are registered already/);
    const plain = await openManual();
    assert.equal(plain.q.metrics, null);
    await plain.q.close();
  } finally {
    await q.close();
  }
});

test('delayq_topic_paused: 1 while the topic is paused, 0 once resumed (the series stays)', async () => {
  const registry = new Registry();
  const { q } = await openManual({ metrics: { registry } });
  try {
    await q.scheduleMany([
      { id: 'p1', topic: 'paused-topic', delayMs: 10 },
      { id: 'o1', topic: 'other', delayMs: 10 },
    ]);
    await q.topics.pause('paused-topic');
    let text = await registry.metrics();
    assert.equal(sample(text, 'delayq_topic_paused{topic="paused-topic"}'), 1);
    assert.equal(sample(text, 'delayq_topic_paused{topic="other"}'), 0);
    await q.topics.resume('paused-topic');
    text = await registry.metrics();
    assert.equal(sample(text, 'delayq_topic_paused{topic="paused-topic"}'), 0);
  } finally {
    await q.close();
  }
});

test('flow limits: delayq_topic_limit_rate (per second) and _concurrency for limited topics only; delayq_topic_throttled_total counts refused admissions', async () => {
  const registry = new Registry();
  const { q } = await openManual({ metrics: { registry } });
  try {
    await q.topics.setLimits('metered', { rate: 30, periodMs: 60_000, concurrency: 4 });
    await q.topics.setLimits('capped', { concurrency: 2 });
    await q.scheduleMany([{ topic: 'free' }, { topic: 'metered' }]);
    let text = await registry.metrics();
    assert.equal(sample(text, 'delayq_topic_limit_rate{topic="metered"}'), 0.5);
    assert.equal(sample(text, 'delayq_topic_limit_concurrency{topic="metered"}'), 4);
    assert.equal(sample(text, 'delayq_topic_limit_concurrency{topic="capped"}'), 2);
    assert.equal(sample(text, 'delayq_topic_limit_rate{topic="capped"}'), undefined, 'no rate limit, no series');
    assert.equal(sample(text, 'delayq_topic_limit_rate{topic="free"}'), undefined);
    // A bucket of 1 per minute: the second due task is refused by the engine, counted.
    await q.topics.setLimits('slow', { rate: 1, periodMs: 60_000 });
    await q.scheduleMany([{ topic: 'slow' }, { topic: 'slow' }]);
    await flush();
    assert.equal((await q.reserve('slow', { max: 2 })).length, 1);
    assert.equal((await q.reserve('slow', { max: 2 })).length, 0);
    text = await registry.metrics();
    const throttled = sample(text, 'delayq_topic_throttled_total{topic="slow"}') ?? 0;
    assert.ok(throttled >= 1, `throttled ${throttled}`);
    assert.equal(throttled, (await q.stats()).throttled['slow'], 'the counter and the stats agree');
    await q.topics.clearLimits('metered');
    text = await registry.metrics();
    assert.equal(sample(text, 'delayq_topic_limit_concurrency{topic="metered"}'), undefined, 'cleared: the series goes');
  } finally {
    await q.close();
  }
});

test('flow limits: topics past maxTopics share topic="_other", their limits summed', async () => {
  const registry = new Registry();
  const { q } = await openManual({ metrics: { registry, maxTopics: 1 } });
  try {
    await q.schedule({ topic: 'first' });
    for (const topic of ['x1', 'x2']) await q.topics.setLimits(topic, { rate: 2, concurrency: 3 });
    q.metrics!.throttled('x1');
    q.metrics!.throttled('x2');
    const text = await registry.metrics();
    assert.equal(sample(text, 'delayq_topic_limit_rate{topic="_other"}'), 4);
    assert.equal(sample(text, 'delayq_topic_limit_concurrency{topic="_other"}'), 6);
    assert.equal(sample(text, 'delayq_topic_throttled_total{topic="_other"}'), 2);
    assert.equal(sample(text, 'delayq_topic_limit_rate{topic="x1"}'), undefined);
  } finally {
    await q.close();
  }
});
