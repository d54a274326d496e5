/**
 * With OpenTelemetry set up (the SDK's in-memory exporter, in this test only), delayq makes
 * spans: schedule (a child of the call's traceparent), deliver and push (children of the
 * schedule span, linked to it), and the push sends the push span as the receiver's parent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { flush, openManual } from '../helpers/engine.js';
import { newSecret, openPushing } from '../helpers/push.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

const exporter = new InMemorySpanExporter();
const named = (prefix: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name.startsWith(prefix));
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

describe('trace context with OpenTelemetry', () => {
  before(() => {
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  });
  after(() => trace.disable());

  it('a schedule span is a child of the call\'s traceparent; the task keeps the span\'s context; a delivery span is its child and links to it', async () => {
    exporter.reset();
    const { q } = await openManual();
    try {
      const { id } = await q.schedule({ topic: 'orders', traceparent: PARENT, tracestate: 'rojo=1' });
      const [scheduled] = named('schedule');
      assert.ok(scheduled);
      assert.deepEqual([scheduled.name, scheduled.kind, scheduled.spanContext().traceId, parentOf(scheduled)], ['schedule orders', SpanKind.PRODUCER, TRACE_ID, '00f067aa0ba902b7']);
      assert.equal(scheduled.attributes['messaging.message.id'], id);
      const [delivery] = await q.reserve('orders');
      assert.equal(delivery?.traceparent, `00-${TRACE_ID}-${scheduled.spanContext().spanId}-01`, 'the pulled delivery carries the schedule span');
      assert.equal(delivery?.tracestate, 'rojo=1');
      const [delivered] = named('deliver');
      assert.ok(delivered);
      assert.deepEqual([delivered.kind, delivered.spanContext().traceId, parentOf(delivered)], [SpanKind.CONSUMER, TRACE_ID, scheduled.spanContext().spanId]);
      assert.deepEqual(delivered.links.map((l) => l.context.spanId), [scheduled.spanContext().spanId]);
      assert.equal(delivered.attributes['delayq.attempt'], 1);
    } finally {
      await q.close();
    }
  });

  it('a call without a traceparent starts a trace of its own; a batch makes one span; a failed write ends its span with an error', async () => {
    exporter.reset();
    const { q } = await openManual();
    try {
      await q.scheduleMany([{ topic: 'a' }, { topic: 'b' }]);
      const [span] = named('schedule');
      assert.deepEqual([span?.name, span?.attributes['messaging.batch.message_count'], parentOf(span!)], ['schedule (several)', 2, undefined]);
      const delivered = await q.reserve('a');
      assert.equal(delivered[0]?.traceparent, `00-${span!.spanContext().traceId}-${span!.spanContext().spanId}-01`);
    } finally {
      await q.close();
    }
    exporter.reset();
    await assert.rejects(q.schedule({ topic: 'a', traceparent: PARENT }));
    assert.equal(named('schedule').length, 0, 'a call refused up front (closed queue) makes no span');
  });

  it('a push span is a child of the schedule span, and the receiver gets it as its parent; a failed push is an error span', async () => {
    exporter.reset();
    const opened = await openPushing({ pushSecret: newSecret() });
    try {
      await opened.q.setPush('orders', { url: 'https://hooks.example.com/x' });
      opened.transport.script.push({ kind: 'response', status: 503, retryAfterMs: null, bodyStart: '' });
      await opened.q.schedule({ topic: 'orders', traceparent: PARENT, backoff: { baseMs: 10, maxMs: 10, jitter: 0 } });
      for (let i = 0; i < 50 && named('push').length < 1; i++) await flush();
      for (let i = 0; i < 50 && (await opened.q.list({ topic: 'orders' }))[0]?.state !== 'pending'; i++) await flush();
      opened.clock.advance(10);
      for (let i = 0; i < 50 && named('push').length < 2; i++) await flush();
      const [scheduled] = named('schedule');
      const pushes = named('push');
      assert.equal(pushes.length, 2);
      for (const [i, push] of pushes.entries()) {
        assert.deepEqual([push.kind, push.spanContext().traceId, parentOf(push)], [SpanKind.CLIENT, TRACE_ID, scheduled!.spanContext().spanId]);
        assert.equal(opened.transport.sent[i]!.request.headers['traceparent'], `00-${TRACE_ID}-${push.spanContext().spanId}-01`);
      }
      assert.equal(pushes[0]!.status.code, SpanStatusCode.ERROR);
      assert.notEqual(pushes[1]!.status.code, SpanStatusCode.ERROR);
    } finally {
      await opened.q.close();
    }
  });
});
