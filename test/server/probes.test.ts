// GET / (to the dashboard) and GET /readyz (the store answers, the queue is open) on real
// servers: a listening app over a real queue, and a redis-server stopped and paused by PID.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { DelayQueue } from '../../src/open-queue.js';
import { buildApp } from '../../src/server/app.js';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis-servers.js';

interface Served {
  readonly base: string;
  readonly app: FastifyInstance;
  readonly queue: DelayQueue;
}

async function serve(store: string, options: { token?: string; ui?: boolean } = {}): Promise<Served> {
  const queue = await DelayQueue.open({ store });
  const app = await buildApp({ queue, logger: false, ...options });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  return { base, app, queue };
}

async function stop(served: Served): Promise<void> {
  await served.app.close();
  await served.queue.close();
}

describe('GET /', () => {
  it('redirects to /ui/ when the dashboard is on, without the token', async () => {
    const served = await serve('memory', { token: 'sekret' });
    try {
      const response = await fetch(`${served.base}/`, { redirect: 'manual' });
      assert.equal(response.status, 302);
      assert.equal(response.headers.get('location'), '/ui/');
      const page = await fetch(`${served.base}/`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<html/i);
    } finally {
      await stop(served);
    }
  });

  it('is a 404 in the error envelope when the dashboard is off', async () => {
    const served = await serve('memory', { ui: false });
    try {
      const response = await fetch(`${served.base}/`, { redirect: 'manual' });
      assert.equal(response.status, 404);
      const body = (await response.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'ROUTE_NOT_FOUND');
      assert.match(body.error.message, /--no-ui/);
    } finally {
      await stop(served);
    }
  });
});

describe('GET /readyz', () => {
  it('is 200 while the queue is open, 503 once it closed (no token needed); why (QUEUE_CLOSED) only with the token', async () => {
    const served = await serve('memory', { token: 'sekret' });
    const ready = await fetch(`${served.base}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready' });
    await served.queue.close();
    const closed = await fetch(`${served.base}/readyz`);
    assert.equal(closed.status, 503);
    assert.deepEqual(await closed.json(), { status: 'not ready' });
    const wrong = await fetch(`${served.base}/readyz`, { headers: { authorization: 'Bearer wrong' } });
    assert.deepEqual([wrong.status, await wrong.json()], [503, { status: 'not ready' }]);
    const told = await fetch(`${served.base}/readyz`, { headers: { authorization: 'Bearer sekret' } });
    assert.equal(told.status, 503);
    assert.deepEqual(await told.json(), { status: 'not ready', error: { code: 'QUEUE_CLOSED', message: 'not ready: the queue is closing or closed' } });
    await served.app.close();
  });

  describe('over Redis', () => {
    const skip = redisSkip();
    let redis: RedisServer;
    let served: Served;

    before(async () => {
      if (skip) return;
      redis = await startRedis();
      served = await serve(`${redis.url}/0?prefix=readyz`, { token: 'sekret' });
    });
    after(async () => {
      if (skip) return;
      await stop(served);
      await redis.stop();
      redis.remove();
    });

    const readyz = async (): Promise<{ status: number; code: string | undefined; message: string | undefined }> => {
      const response = await fetch(`${served.base}/readyz`, { headers: { authorization: 'Bearer sekret' } });
      const body = (await response.json()) as { error?: { code: string; message: string } };
      return { status: response.status, code: body.error?.code, message: body.error?.message };
    };

    it('is 200 while Redis answers', { skip }, async () => {
      assert.equal((await readyz()).status, 200);
    });

    it('is 503 STORE_UNAVAILABLE within its timeout while Redis is frozen (SIGSTOP), 200 again after SIGCONT', { skip }, async () => {
      redis.pause();
      try {
        const answer = await readyz();
        assert.equal(answer.status, 503);
        assert.equal(answer.code, 'STORE_UNAVAILABLE');
        assert.match(answer.message ?? '', /did not answer within 1000 ms/);
        // /healthz (liveness) does not ask the store: the process is alive.
        assert.equal((await fetch(`${served.base}/healthz`)).status, 200);
      } finally {
        redis.resume();
      }
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) status = (await readyz()).status;
      assert.equal(status, 200);
    });

    it('is 503 STORE_UNAVAILABLE once redis-server is stopped, 200 after it is back on its port', { skip }, async () => {
      const { port, dir } = redis;
      await redis.stop();
      const answer = await readyz();
      assert.equal(answer.status, 503);
      assert.equal(answer.code, 'STORE_UNAVAILABLE');
      redis = await startRedis({ port, dir });
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) status = (await readyz()).status;
      assert.equal(status, 200);
    });
  });
});
