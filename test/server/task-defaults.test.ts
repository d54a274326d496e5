// The server's task defaults and retention (issue 50): set by flags or variables, they apply
// to every task scheduled over HTTP without its own ttrMs, maxAttempts or backoff, and
// finished tasks are purged after --retention-ms. Through startServer and real HTTP, the
// queue's time a ManualClock.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { ManualClock } from '../../src/core/manual-clock.js';
import { parseServerConfig } from '../../src/server/config.js';
import { startServer, type RunningServer } from '../../src/server/main.js';

describe('the server sets the task defaults and the retention', () => {
  const clock = new ManualClock();
  let server: RunningServer;
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
    const response = await fetch(`${server.address}${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  before(async () => {
    const flags = { store: 'memory', port: '0', logLevel: 'silent', ui: false, defaultTtrMs: '7000', defaultBackoffBaseMs: '250', defaultBackoffJitter: '0', purgeIntervalMs: '1000' };
    const env = { DELAYQ_DEFAULT_MAX_ATTEMPTS: '2', DELAYQ_DEFAULT_BACKOFF_FACTOR: '3', DELAYQ_DEFAULT_BACKOFF_MAX_MS: '5000', DELAYQ_RETENTION_MS: '60000' };
    server = await startServer(parseServerConfig(flags, env), pino({ level: 'silent' }), clock);
  });
  after(() => server.stop());

  it('gives a task scheduled without them the server\'s ttrMs, maxAttempts and backoff; a task\'s own win', async () => {
    assert.equal((await call('POST', '/v1/tasks', { id: 'plain', topic: 't', delayMs: 60_000 })).status, 201);
    const plain = await call('GET', '/v1/tasks/plain');
    assert.deepEqual([plain.json['ttrMs'], plain.json['maxAttempts'], plain.json['backoff']], [7_000, 2, { baseMs: 250, factor: 3, maxMs: 5_000, jitter: 0 }]);
    await call('POST', '/v1/tasks', { id: 'own', topic: 't', delayMs: 60_000, ttrMs: 1_000, maxAttempts: 9, backoff: { baseMs: 10 } });
    const own = await call('GET', '/v1/tasks/own');
    assert.deepEqual([own.json['ttrMs'], own.json['maxAttempts'], own.json['backoff']], [1_000, 9, { baseMs: 10, factor: 3, maxMs: 5_000, jitter: 0 }]);
    // The batch route too.
    await call('POST', '/v1/tasks/batch', { tasks: [{ id: 'batched', topic: 't', delayMs: 60_000 }] });
    assert.equal((await call('GET', '/v1/tasks/batched')).json['ttrMs'], 7_000);
  });

  it('reserves for the default ttr and retries by the default backoff', async () => {
    await call('POST', '/v1/tasks', { id: 'failing', topic: 'f' });
    const reserved = await call('POST', '/v1/topics/f/reserve', { max: 1 });
    const [task] = reserved.json['tasks'] as { receipt: string; reservedUntil: number }[];
    assert.equal(task?.reservedUntil, clock.now() + 7_000);
    const nack = await call('POST', '/v1/tasks/failing/nack', { receipt: task.receipt });
    assert.equal(nack.status, 200, JSON.stringify(nack.json));
    assert.equal((await call('GET', '/v1/tasks/failing')).json['runAt'], clock.now() + 250);
  });

  it('purges a finished task after the retention, not before', async () => {
    await call('POST', '/v1/tasks', { id: 'done', topic: 'd' });
    const [task] = (await call('POST', '/v1/topics/d/reserve', { max: 1 })).json['tasks'] as { receipt: string }[];
    assert.equal((await call('POST', '/v1/tasks/done/ack', { receipt: task?.receipt })).status, 200);
    // A second at a time: the janitor re-arms (every --purge-interval-ms) once its purge settled.
    const pass = async (ms: number): Promise<void> => {
      for (let step = 0; step < ms; step += 1_000) {
        clock.advance(1_000);
        for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await pass(58_000);
    assert.equal((await call('GET', '/v1/tasks/done')).status, 200, 'kept within the retention');
    await pass(4_000);
    assert.equal((await call('GET', '/v1/tasks/done')).status, 404, 'purged after it');
  });
});
