/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
/**
 * A shard that cannot take writes, seen from the outside: a real server on a real Redis,
 * whose namespace user loses write access to one shard's keys (an ACL selector), answers a
 * batch per task (that shard's tasks STORE_UNAVAILABLE, the others stored), names the shard
 * in /v1/stats and in a metric, and the dashboard's overview (real Chromium) says so until
 * the shard takes writes again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import type { Browser } from 'playwright-core';
import { parseServerConfig } from '../../src/server/config.js';
import { startServer, type RunningServer } from '../../src/server/main.js';
import { buildKeyspace } from '../../src/stores/redis/keys.js';
import { shardOf } from '../../src/coordination/router.js';
import { launchBrowser } from '../helpers/browser.js';
import { cli, redisSkip, startRedis, type RedisServer } from '../helpers/redis-servers.js';

const TOKEN = 'ui-shards-token';
const PREFIX = 'uis';
const SHARDS = 4;
const DEGRADED = 2;

describe('a shard that cannot take writes: HTTP, metrics and the dashboard', { skip: redisSkip() }, () => {
  let redis: RedisServer;
  let server: RunningServer;
  let browser: Browser;

  const allowWrites = (): void => void cli(redis.port, 'ACL', 'SETUSER', PREFIX, 'resetkeys', '~*');
  const refuseWrites = (): void => {
    const keys = buildKeyspace(PREFIX, SHARDS);
    const writable = [keys.meta, ...keys.shards.filter((s) => s.index !== DEGRADED).map((s) => s.pool)].map((key) => `%RW~${key.slice(0, key.lastIndexOf(':'))}:*`);
    cli(redis.port, 'ACL', 'SETUSER', PREFIX, 'resetkeys', '%R~*', ...writable);
  };

  before(async () => {
    redis = await startRedis();
    cli(redis.port, 'ACL', 'SETUSER', PREFIX, 'on', '>pw', '~*', '&*', '+@all');
    const store = `redis://${PREFIX}:pw@127.0.0.1:${redis.port}?prefix=${PREFIX}&shards=${SHARDS}`;
    server = await startServer(parseServerConfig({ store, port: '0', token: TOKEN, logLevel: 'silent' }, {}), pino({ level: 'silent' }));
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await redis?.stop();
    redis?.remove();
  });

  async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; text: string }> {
    const response = await fetch(server.address + path, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined, text };
  }

  it('answers per task, names the shard in stats, metrics and the overview, and clears it once the shard takes writes', { timeout: 60_000 }, async () => {
    assert.deepEqual((await api('GET', '/v1/stats')).body.unavailable, []);
    refuseWrites();
    const tasks = Array.from({ length: 40 }, (_, i) => ({ id: `u-${i}`, topic: 'shards', delayMs: 600_000 }));
    const batch = await api('POST', '/v1/tasks/batch', { tasks });
    assert.equal(batch.status, 200);
    tasks.forEach((task, i) => {
      const result = batch.body.results[i];
      if (shardOf(task.id, SHARDS) === DEGRADED) assert.equal(result.error?.code, 'STORE_UNAVAILABLE', `${task.id} refused`);
      else assert.equal(result.created, true, `${task.id} stored: ${JSON.stringify(result)}`);
    });
    const stats = await api('GET', '/v1/stats');
    assert.deepEqual(
      stats.body.unavailable.map((u: { partition: number }) => u.partition),
      [DEGRADED],
    );
    assert.ok(stats.body.unavailable[0].since <= Date.now());
    assert.match((await api('GET', '/metrics')).text, /^delayq_shards_unavailable 1$/m);

    const context = await browser.newContext();
    await context.addInitScript(`sessionStorage.setItem('delayq.token', ${JSON.stringify(TOKEN)})`);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    try {
      await page.goto(`${server.address}/ui/#/overview`);
      const shard = page.getByTestId('unavailable-shard');
      await shard.waitFor();
      assert.match((await shard.textContent()) ?? '', new RegExp(`^shard ${DEGRADED}: since `));

      allowWrites();
      // The probe (every second) finds it back; the overview refreshes on its own.
      await page.getByTestId('unavailable').waitFor({ state: 'detached', timeout: 15_000 });
      assert.deepEqual((await api('GET', '/v1/stats')).body.unavailable, []);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
    // Sent again, the refused tasks are stored.
    const again = await api('POST', '/v1/tasks/batch', { tasks });
    for (let i = 0; i < 10; i++) {
      if (again.body.results.every((r: { error?: unknown }) => r.error === undefined)) break;
      await sleep(200);
    }
    assert.ok(
      again.body.results.every((r: { error?: unknown }) => r.error === undefined),
      JSON.stringify(again.body.results.filter((r: { error?: unknown }) => r.error !== undefined)),
    );
  });
});
