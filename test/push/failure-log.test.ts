// Failed pushes in the log: one warn line per origin per 10 s with the count left out, on
// the queue's ManualClock; and the SSRF refusal tells how to allow a local receiver.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BREAKER_DEFAULTS } from '../../src/core/push-breaker.js';
import { ManualClock } from '../../src/core/manual-clock.js';
import type { Logger } from '../../src/core/ports/index.js';
import { PUSH_FAILURE_LOG_INTERVAL_MS, PushFailureLog, type PushFailure } from '../../src/engine/push/push-failure-log.js';
import { DelayQueue } from '../../src/open-queue.js';
import { T0, flush } from '../helpers/engine.js';
import { openPushing, status } from '../helpers/push.js';
import { openTestApp, send } from '../helpers/service.js';

interface Line {
  readonly level: string;
  readonly obj: Record<string, unknown>;
  readonly msg: string;
}

function capture(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: string) => (obj: object, msg?: string) => lines.push({ level, obj: obj as Record<string, unknown>, msg: msg ?? '' });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

const failure = (origin: string, id = 't1'): PushFailure => ({ origin, topic: 'orders', id, attempt: 1, result: 'http5xx', error: 'HTTP 500: down' });

describe('PushFailureLog', () => {
  it('writes one line per origin per interval, then the count it left out', () => {
    const clock = new ManualClock(T0);
    const { logger, lines } = capture();
    const log = new PushFailureLog(logger, clock);
    log.failed(failure('https://a.example'));
    log.failed(failure('https://a.example', 't2'));
    log.failed(failure('https://b.example'));
    clock.advance(PUSH_FAILURE_LOG_INTERVAL_MS - 1);
    log.failed(failure('https://a.example', 't3'));
    assert.deepEqual(
      lines.map((line) => [line.level, line.obj['origin'], line.obj['suppressed']]),
      [
        ['warn', 'https://a.example', 0],
        ['warn', 'https://b.example', 0],
      ],
    );
    assert.equal(lines[0]?.msg, 'push to https://a.example failed: HTTP 500: down');
    clock.advance(1);
    log.failed(failure('https://a.example', 't4'));
    assert.equal(lines.length, 3);
    assert.equal(lines[2]?.obj['suppressed'], 2);
    assert.equal(lines[2]?.obj['id'], 't4');
    assert.equal(lines[2]?.msg, 'push to https://a.example failed: HTTP 500: down; 2 more failed pushes to it were not logged in the last 10 s');
    // The count starts again after a line.
    clock.advance(PUSH_FAILURE_LOG_INTERVAL_MS);
    log.failed(failure('https://a.example', 't5'));
    assert.equal(lines[3]?.obj['suppressed'], 0);
  });

  it('names --push-allow when the failure is a refused destination', () => {
    const { logger, lines } = capture();
    new PushFailureLog(logger, new ManualClock(T0)).failed({ ...failure('http://127.0.0.1:9'), result: 'refused', error: 'refused destination 127.0.0.1: loopback' });
    assert.match(lines[0]?.msg ?? '', /--push-allow/);
  });
});

describe('failed pushes of a queue', () => {
  it('tasks failing against one receiver make one warn line, then one with the count left out', async () => {
    const { logger, lines } = capture();
    const { q, clock, transport } = await openPushing({ logger });
    try {
      transport.fallback = status(503, 'maintenance');
      await q.setPush('orders', { url: 'https://hooks.example.com/orders?token=abc' });
      for (let i = 0; i < 20; i++) await q.schedule({ id: `o${i}`, topic: 'orders', payload: i });
      await flush();
      // The circuit breaker stops sending after a few failures; each sent one failed.
      const sentFirst = transport.sent.length;
      assert.ok(sentFirst >= 2, `sent ${sentFirst}`);
      const warned = (): Line[] => lines.filter((line) => line.level === 'warn' && line.msg.startsWith('push to'));
      assert.equal(warned().length, 1);
      assert.equal(warned()[0]?.obj['origin'], 'https://hooks.example.com');
      assert.equal(warned()[0]?.msg, 'push to https://hooks.example.com failed: HTTP 503: maintenance');
      // Once the breaker lets a probe through (30 s on), it fails too: its line counts every failure after the first.
      clock.advance(BREAKER_DEFAULTS.cooldownMs);
      await flush();
      assert.ok(transport.sent.length > sentFirst);
      assert.equal(warned().length, 2);
      assert.equal(warned()[1]?.obj['suppressed'], sentFirst - 1);
      assert.match(warned()[1]?.msg ?? '', new RegExp(`; ${sentFirst - 1} more failed pushes to it were not logged in the last 30 s$`));
    } finally {
      transport.fallback = status(200);
      await q.close();
    }
  });
});

describe('a push URL refused by the SSRF rules', () => {
  it('names --push-allow and the entry to allow (library, real transport)', async () => {
    const q = await DelayQueue.open({ store: 'memory' });
    try {
      await assert.rejects(q.setPush('orders', { url: 'http://127.0.0.1:8080/hook' }), (error: Error) => {
        assert.match(error.message, /refused destination 127\.0\.0\.1: loopback; to push to it anyway, allow it with --push-allow \/ DELAYQ_PUSH_ALLOW \(push\.allow in the library\), e\.g\. 127\.0\.0\.1:8080$/);
        return true;
      });
      await assert.rejects(q.schedule({ topic: 'x', url: 'http://[::1]:9000/hook' }), /e\.g\. \[::1\]:9000$/);
    } finally {
      await q.close();
    }
  });

  it('over HTTP: 400 INVALID_URL naming --push-allow', async () => {
    const served = await openTestApp();
    try {
      const answer = await send<{ error: { code: string; message: string } }>(served.app, { method: 'PUT', url: '/v1/topics/orders/push', body: { url: 'http://10.1.2.3/in' } });
      assert.equal(answer.status, 400);
      assert.equal(answer.body.error.code, 'INVALID_URL');
      assert.match(answer.body.error.message, /private; to push to it anyway, allow it with --push-allow/);
    } finally {
      await served.close();
    }
  });
});
