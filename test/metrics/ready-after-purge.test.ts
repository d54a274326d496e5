// Issue 49: after `DELETE /v1/topics/t/tasks?state=pending` purged due tasks,
// delayq_ready_tasks{topic} and delayq_oldest_ready_age_seconds{topic} kept counting them
// (the age climbing, so the documented `> 60` alert fired) until someone reserved on the
// topic. On every store: after the purge both read 0 at the next scrape, other topics keep
// theirs, and nothing purged is delivered. The ready gauges count what waits in this
// process's ready queue (memory, SQLite); a shared store's due tasks wait in the store
// (Redis ready lists, PostgreSQL rows), which the gauges do not count: 0 there before and
// after (docs/metrics.md).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { ManualClock } from '../../src/core/manual-clock.js';
import { DelayQueue } from '../../src/open-queue.js';
import { buildApp } from '../../src/server/app.js';
import { T0, flush } from '../helpers/engine.js';
import { dropSchema, freshSchema, storeUrl } from '../helpers/postgres.js';
import { redisSkip, startRedis } from '../helpers/redis-servers.js';
import { send } from '../helpers/service.js';

/** The value of one sample line (name + exact label set) in the text format, or undefined. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

interface Opened {
  readonly q: DelayQueue;
  readonly registry: Registry;
  /** Lets time pass: a ManualClock step (local stores), or real time (shared stores, whose leases run on it). */
  readonly pass: (ms: number) => Promise<void>;
  /** Whether this process's ready queue holds the due tasks (memory, SQLite): the gauges count them. */
  readonly local: boolean;
  readonly close: () => Promise<void>;
}

async function purgeDueTasks(opened: Opened): Promise<void> {
  const { q, registry, pass, local } = opened;
  const app = await buildApp({ queue: q, logger: false, checkResponses: true, metrics: q.metrics });
  try {
    // A cancelled task the purge of pending ones leaves: the store still counts the topic, so
    // its series stay, and must read 0.
    await q.schedule({ id: 'c1', topic: 'stuck', delayMs: 600_000 });
    assert.equal(await q.cancel('c1'), true);
    // Paused: nothing consumes, so the due tasks wait (the operator's case: a stuck topic, purged).
    await q.topics.pause('stuck');
    await q.topics.pause('kept');
    await q.scheduleMany([
      { id: 's1', topic: 'stuck', delayMs: 1_000 },
      { id: 's2', topic: 'stuck', delayMs: 1_000 },
      { id: 's3', topic: 'stuck', delayMs: 1_000 },
      { id: 'k1', topic: 'kept', delayMs: 1_000 },
    ]);
    await pass(2_500);
    const gauges = async (topic: string): Promise<[number | undefined, number | undefined]> => {
      const text = await registry.metrics();
      return [sample(text, `delayq_ready_tasks{topic="${topic}"}`), sample(text, `delayq_oldest_ready_age_seconds{topic="${topic}"}`)];
    };
    const [ready, age] = await gauges('stuck');
    if (local) {
      assert.equal(ready, 3, 'three due tasks wait');
      assert.ok(age !== undefined && age >= 1.4, `their age: ${age}`);
    } else assert.deepEqual([ready, age], [0, 0], 'a shared store\'s ready tasks are not counted here');

    const purged = await send(app, { method: 'DELETE', url: '/v1/topics/stuck/tasks?state=pending' });
    assert.deepEqual(purged.body, { purged: 3 });
    // At once, and still after more time (the age must not climb).
    assert.deepEqual(await gauges('stuck'), [0, 0], 'right after the purge');
    await pass(2_000);
    assert.deepEqual(await gauges('stuck'), [0, 0], 'and later');
    const [keptReady, keptAge] = await gauges('kept');
    if (local) {
      assert.equal(keptReady, 1, 'another topic keeps its ready task');
      assert.ok(keptAge !== undefined && keptAge >= 3, `and its age: ${keptAge}`);
    }
    const stats = (await send<{ ready: Record<string, number>; oldestReady: Record<string, number> }>(app, { method: 'GET', url: '/v1/stats' })).body;
    assert.equal(stats.ready['stuck'], undefined);
    assert.equal(stats.oldestReady['stuck'], undefined);
    // Nothing purged is delivered once the topic is resumed; the other topic's task is.
    await q.topics.resume('stuck');
    await q.topics.resume('kept');
    assert.deepEqual(await q.reserve('stuck', { max: 10, waitMs: 0 }), []);
    const [k1] = await q.reserve('kept', { max: 10, waitMs: 5_000 });
    assert.equal(k1?.id, 'k1');
    assert.deepEqual(await gauges('kept'), [0, 0]);
  } finally {
    await app.close();
    await opened.close();
  }
}

/** The memory store on a ManualClock: time passes by steps. */
async function openMemory(): Promise<Opened> {
  const registry = new Registry();
  const clock = new ManualClock(T0);
  const q = await DelayQueue.open({ store: 'memory', clock, metrics: { registry } });
  const pass = async (ms: number): Promise<void> => {
    clock.advance(ms);
    await flush();
  };
  return { q, registry, local: true, pass, close: () => q.close() };
}

/**
 * A store on the system clock (SQLite commits, Redis and PostgreSQL leases run on it):
 * time passes for real, and the assertions only need it to have passed at least that long.
 */
async function openOnSystemClock(store: string, storeOptions: Record<string, unknown>, local: boolean, cleanup: () => Promise<void> | void): Promise<Opened> {
  const registry = new Registry();
  const q = await DelayQueue.open({ store, storeOptions, metrics: { registry } });
  return {
    q,
    registry,
    local,
    pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    close: async () => {
      await q.close();
      await cleanup();
    },
  };
}

describe('the ready gauges after a purge of due tasks', () => {
  it('memory', async () => {
    await purgeDueTasks(await openMemory());
  });

  it('SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'delayq-ready-'));
    await purgeDueTasks(await openOnSystemClock(`sqlite:${join(dir, 'r.db')}`, {}, true, () => rmSync(dir, { recursive: true, force: true })));
  });

  it('Redis', { skip: redisSkip() }, async () => {
    const server = await startRedis();
    await purgeDueTasks(
      await openOnSystemClock(server.url, { prefix: 'ready', shards: 4 }, false, async () => {
        await server.stop();
        server.remove();
      }),
    );
  });

  it('PostgreSQL', async () => {
    const schema = freshSchema('ready');
    await purgeDueTasks(await openOnSystemClock(storeUrl(schema), {}, false, () => dropSchema(schema)));
  });
});
