/**
 * Trace context without OpenTelemetry: a scheduling call's traceparent/tracestate is kept
 * with the task, handed to pull consumers and workers, and a push sends a child of it.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import type { DelayQueue } from '../../src/open-queue.js';
import { flush, openManual } from '../helpers/engine.js';
import { newSecret, openPushing } from '../helpers/push.js';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const STATE = 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE';

describe('trace context, carried (no OpenTelemetry)', () => {
  let q: DelayQueue | undefined;
  afterEach(async () => {
    await q?.close();
    q = undefined;
  });

  it('a pulled delivery has the traceparent and tracestate it was scheduled with; none without, none for a malformed one', async () => {
    ({ q } = await openManual());
    await q.scheduleMany([
      { topic: 't', id: 'a', traceparent: PARENT, tracestate: STATE },
      { topic: 't', id: 'b', traceparent: PARENT },
      { topic: 't', id: 'c' },
      { topic: 't', id: 'd', traceparent: PARENT.toUpperCase(), tracestate: STATE },
      { topic: 't', id: 'e', traceparent: PARENT, tracestate: 'Not=valid' },
    ]);
    const byId = new Map((await q.reserve('t', { max: 10 })).map((d) => [d.id, d]));
    assert.deepEqual([byId.get('a')?.traceparent, byId.get('a')?.tracestate], [PARENT, STATE]);
    assert.deepEqual([byId.get('b')?.traceparent, 'tracestate' in byId.get('b')!], [PARENT, false]);
    for (const id of ['c', 'd']) assert.deepEqual(['traceparent' in byId.get(id)!, 'tracestate' in byId.get(id)!], [false, false], id);
    assert.deepEqual([byId.get('e')?.traceparent, 'tracestate' in byId.get('e')!], [PARENT, false]);
  });

  it('refuses a traceparent or tracestate that is not text (INVALID_OPTION), storing nothing', async () => {
    ({ q } = await openManual());
    await assert.rejects(q.schedule({ topic: 't', id: 'x', traceparent: 7 as unknown as string }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
    await assert.rejects(q.schedule({ topic: 't', id: 'x', traceparent: PARENT, tracestate: {} as unknown as string }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
    assert.equal(await q.get('x'), null);
  });

  it("a worker's job has it", async () => {
    ({ q } = await openManual());
    await q.schedule({ topic: 'w', traceparent: PARENT, tracestate: STATE });
    const seen: [string | undefined, string | undefined][] = [];
    q.work('w', async (job) => {
      seen.push([job.traceparent, job.tracestate]);
    });
    for (let i = 0; i < 50 && seen.length === 0; i++) await flush();
    assert.deepEqual(seen, [[PARENT, STATE]]);
  });

  it('a push sends a child of it (same trace id and flags, a new parent id each attempt) and its tracestate, over a subscription header of that name', async () => {
    const opened = await openPushing({ pushSecret: newSecret() });
    q = opened.q;
    await q.setPush('orders', { url: 'https://hooks.example.com/x', headers: { TraceParent: 'stale', 'x-team': 'a' } });
    opened.transport.script.push({ kind: 'response', status: 503, retryAfterMs: null, bodyStart: '' });
    await q.schedule({ topic: 'orders', traceparent: PARENT, tracestate: STATE, backoff: { baseMs: 10, maxMs: 10, jitter: 0 } });
    for (let i = 0; i < 20 && opened.transport.sent.length < 1; i++) await flush();
    for (let i = 0; i < 50 && (await q.list({ topic: 'orders' }))[0]?.state !== 'pending'; i++) await flush();
    opened.clock.advance(10);
    for (let i = 0; i < 20 && opened.transport.sent.length < 2; i++) await flush();
    await q.schedule({ topic: 'orders', id: 'plain' });
    for (let i = 0; i < 20 && opened.transport.sent.length < 3; i++) await flush();
    const traced = opened.transport.sent.filter((s) => s.request.headers['webhook-id'] !== 'plain').map((s) => s.request.headers);
    assert.equal(traced.length, 2);
    const parents = traced.map((h) => h['traceparent']!);
    for (const [i, h] of traced.entries()) {
      assert.match(parents[i]!, /^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
      assert.notEqual(parents[i], PARENT);
      assert.equal(h['tracestate'], STATE);
      assert.equal(h['TraceParent'], undefined);
      assert.equal(h['x-team'], 'a');
    }
    assert.notEqual(parents[0], parents[1], 'each attempt its own parent id');
    const plain = opened.transport.sent.find((s) => s.request.headers['webhook-id'] === 'plain')!.request.headers;
    // A task without a trace context: the subscription's own header (names are kept in lower case) goes as it is.
    assert.deepEqual([plain['traceparent'], 'tracestate' in plain], ['stale', false]);
  });
});
