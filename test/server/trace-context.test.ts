/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-explicit-any --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
/**
 * Trace context over HTTP: the `traceparent`/`tracestate` headers of POST /v1/tasks and
 * /v1/tasks/batch are kept with the tasks, answered by reserve, sent (as a child) by a push;
 * a malformed header is ignored, never refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/core/manual-clock.js';
import { flush } from '../helpers/engine.js';
import { ScriptedTransport, newSecret, testSigner } from '../helpers/push.js';
import { openTestApp, send, type TestApp } from '../helpers/service.js';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const STATE = 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE';

describe('trace context over HTTP (inject)', () => {
  let t: TestApp;
  let transport: ScriptedTransport;
  before(async () => {
    const clock = new ManualClock(Date.UTC(2030, 0, 1));
    transport = new ScriptedTransport(clock);
    t = await openTestApp({ clock, push: { transport, signer: testSigner } });
  });
  after(() => t.close());

  const reserve = async (topic: string): Promise<any[]> => {
    const answer = await send(t.app, { method: 'POST', url: `/v1/topics/${topic}/reserve`, body: { max: 10 } });
    assert.equal(answer.status, 200);
    return answer.body.tasks;
  };

  it('POST /v1/tasks keeps the headers; reserve answers them; none without, none for malformed ones (still 201)', async () => {
    const traced = await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'a', id: 'traced' }, headers: { traceparent: PARENT, tracestate: STATE } });
    assert.equal(traced.status, 201);
    assert.equal((await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'a', id: 'plain' } })).status, 201);
    const bad = await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'a', id: 'bad' }, headers: { traceparent: `${PARENT},${PARENT}`, tracestate: STATE } });
    assert.equal(bad.status, 201);
    const badState = await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'a', id: 'bad-state' }, headers: { traceparent: PARENT, tracestate: `a=${'v'.repeat(250)},b=${'v'.repeat(250)},c=${'v'.repeat(20)}` } });
    assert.equal(badState.status, 201);
    const byId = new Map((await reserve('a')).map((d) => [d.id, d]));
    assert.deepEqual([byId.get('traced').traceparent, byId.get('traced').tracestate], [PARENT, STATE]);
    for (const id of ['plain', 'bad']) assert.deepEqual(['traceparent' in byId.get(id), 'tracestate' in byId.get(id)], [false, false], id);
    assert.deepEqual([byId.get('bad-state').traceparent, 'tracestate' in byId.get('bad-state')], [PARENT, false]);
  });

  it('GET /v1/tasks/:id shows the trace its deliveries carry, and none for a task without one', async () => {
    assert.equal((await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'shown', id: 'shown-traced', delayMs: 60_000 }, headers: { traceparent: PARENT, tracestate: STATE } })).status, 201);
    assert.equal((await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'shown', id: 'shown-plain', delayMs: 60_000 } })).status, 201);
    const traced = await send(t.app, { method: 'GET', url: '/v1/tasks/shown-traced' });
    assert.equal(traced.status, 200);
    assert.deepEqual([traced.body.traceparent, traced.body.tracestate], [PARENT, STATE]);
    const plain = await send(t.app, { method: 'GET', url: '/v1/tasks/shown-plain' });
    assert.deepEqual(['traceparent' in plain.body, 'tracestate' in plain.body], [false, false]);
    const listed = await send(t.app, { method: 'GET', url: '/v1/topics/shown/tasks' });
    if (listed.status === 200) assert.equal(listed.body.tasks.find((task: any) => task.id === 'shown-traced')?.traceparent, PARENT);
  });

  it('a traceparent in the body is refused like any unknown field: the header is the way', async () => {
    const answer = await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'a', traceparent: PARENT } });
    assert.equal(answer.status, 400);
  });

  it('POST /v1/tasks/batch gives every task of the request the headers', async () => {
    const answer = await send(t.app, { method: 'POST', url: '/v1/tasks/batch', body: { tasks: [{ topic: 'b', id: 'b1' }, { topic: 'b', id: 'b2' }] }, headers: { traceparent: PARENT } });
    assert.equal(answer.status, 200);
    const tasks = await reserve('b');
    assert.deepEqual(tasks.map((d) => [d.id, d.traceparent, 'tracestate' in d]).sort(), [
      ['b1', PARENT, false],
      ['b2', PARENT, false],
    ]);
  });

  it('a push of a task scheduled with the headers sends a child traceparent and the tracestate', async () => {
    await t.queue.setPush('p', { url: 'https://hooks.example.com/in', secret: newSecret() });
    await send(t.app, { method: 'POST', url: '/v1/tasks', body: { topic: 'p' }, headers: { traceparent: PARENT, tracestate: STATE } });
    for (let i = 0; i < 50 && transport.sent.length === 0; i++) await flush();
    const headers = transport.sent[0]!.request.headers;
    assert.match(headers['traceparent']!, /^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    assert.notEqual(headers['traceparent'], PARENT);
    assert.equal(headers['tracestate'], STATE);
  });

  it('the OpenAPI document names both headers on both routes, and the Delivery fields', async () => {
    const doc = (await send(t.app, { method: 'GET', url: '/openapi.json' })).body;
    for (const path of ['/v1/tasks', '/v1/tasks/batch'])
      assert.deepEqual(doc.paths[path].post.parameters.filter((p: any) => p.in === 'header').map((p: any) => p.name), ['traceparent', 'tracestate'], path);
    const delivery = JSON.stringify(doc.paths['/v1/topics/{topic}/reserve'].post.responses['200']);
    const schemas = JSON.stringify(doc.components.schemas);
    assert.ok(delivery.includes('traceparent') || schemas.includes('traceparent'));
  });
});
