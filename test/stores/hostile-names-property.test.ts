/**
 * Property test (issue 45): topics and ids from a generator that favours `__proto__`,
 * `constructor`, `toString`, `hasOwnProperty`, `valueOf`, `__defineGetter__` and friends,
 * through a whole queue on every store (memory, SQLite, Redis, PostgreSQL): each task is
 * scheduled, counted by stats and by a Prometheus scrape, held and released by a pause and
 * a flow limit of its topic, and delivered like any other; the process lives and
 * Object.prototype is left alone. Before issue 45 a topic `__proto__` made the first stats
 * write `Object.prototype.pending` (every scrape threw from then on), and topics named after
 * Object.prototype members were never delivered on memory and SQLite (their limits read as
 * functions) and failed every reserve on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { DelayQueue } from '../../src/open-queue.js';
import { hostileNames, prototypeIntact } from '../helpers/hostile-names.js';
import { dropSchema, freshSchema, storeUrl } from '../helpers/postgres.js';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis-servers.js';

interface StoreKind {
  readonly name: string;
  readonly runs: number;
  /** A fresh, empty store's URL for each run, and how to drop it after. */
  open(run: number): { url: string; drop: () => Promise<void> };
  readonly skip?: string | false;
}

const dir = mkdtempSync(join(tmpdir(), 'delayq-hostile-'));
let redis: RedisServer | undefined;
const skipRedis = redisSkip();

const KINDS: StoreKind[] = [
  { name: 'memory', runs: 25, open: () => ({ url: 'memory', drop: async () => {} }) },
  { name: 'sqlite', runs: 10, open: (run) => ({ url: `sqlite:${join(dir, `q${run}.db`)}`, drop: async () => {} }) },
  { name: 'redis', runs: 10, skip: skipRedis, open: (run) => ({ url: `${redis!.url}?prefix=hostile${run}`, drop: async () => {} }) },
  {
    name: 'postgres',
    runs: 6,
    open: () => {
      const schema = freshSchema('hostile');
      return { url: storeUrl(schema), drop: () => dropSchema(schema) };
    },
  },
];

before(async () => {
  if (!skipRedis) redis = await startRedis();
});
after(async () => {
  await redis?.stop();
  redis?.remove();
  rmSync(dir, { recursive: true, force: true });
});

/** Takes every task of `topic` until `ids` are all in, acking each; fails after `ms`. */
async function drain(q: DelayQueue, topic: string, ids: ReadonlySet<string>, ms: number): Promise<string[]> {
  const got: string[] = [];
  const deadline = Date.now() + ms;
  while (got.length < ids.size && Date.now() < deadline) {
    for (const task of await q.reserve(topic, { max: 10, waitMs: 500 })) {
      assert.ok(task.runAt <= Date.now(), `${task.id} delivered before its runAt`);
      got.push(task.id);
      await q.ack(task.id, task.receipt);
    }
  }
  return got.sort();
}

for (const kind of KINDS) {
  describe(`hostile names on ${kind.name}`, { skip: kind.skip ?? false }, () => {
    it('the reproductions: topics constructor, toString, valueOf and hasOwnProperty are delivered, and limits of __proto__ hold none of rate, burst, periodMs, concurrency back', async () => {
      const { url, drop } = kind.open(1_000);
      const q = await DelayQueue.open({ store: url, metrics: { registry: new Registry() } });
      try {
        await q.topics.setLimits('__proto__', { rate: 1 });
        const topics = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', 'rate', 'burst', 'periodMs', 'concurrency'];
        for (const topic of topics) await q.schedule({ id: `${topic}-1`, topic });
        for (const topic of topics) assert.deepEqual(await drain(q, topic, new Set([`${topic}-1`]), 15_000), [`${topic}-1`], topic);
      } finally {
        await q.close();
        await drop();
      }
    });

    it('every task of every such topic is counted, scraped, paused, limited and delivered; Object.prototype untouched', async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(hostileNames(6), hostileNames(6), fc.nat(), async (topics, ids, seed) => {
          const { url, drop } = kind.open(run++);
          const registry = new Registry();
          const q = await DelayQueue.open({ store: url, metrics: { registry } });
          try {
            // Each id a task of a topic from the other list; one topic paused, one limited.
            const byTopic = new Map<string, Set<string>>();
            for (const [i, id] of ids.entries()) {
              const topic = topics[(i + seed) % topics.length]!;
              await q.schedule({ id, topic, payload: { id, topic } });
              if (!byTopic.has(topic)) byTopic.set(topic, new Set());
              byTopic.get(topic)!.add(id);
            }
            const paused = topics[seed % topics.length]!;
            const limited = topics[(seed + 1) % topics.length]!;
            await q.topics.pause(paused);
            await q.topics.setLimits(limited, { rate: 1_000, concurrency: 4 });
            assert.deepEqual({ ...(await q.topics.getLimits(limited)) }, { rate: 1_000, periodMs: 1_000, burst: 1_000, concurrency: 4 });
            for (const topic of topics) if (topic !== limited) assert.equal(await q.topics.getLimits(topic), null, `limits of ${topic}`);

            const stats = await q.stats();
            for (const [topic, of] of byTopic) assert.equal(Object.hasOwn(stats.topics, topic) ? stats.topics[topic]!.pending : undefined, of.size, `stats of ${topic}`);
            const text = await registry.metrics();
            for (const topic of byTopic.keys()) assert.ok(text.includes(`delayq_tasks{state="pending",topic="${topic}"} ${byTopic.get(topic)!.size}`), `scrape of ${topic}`);
            assert.equal(await registry.metrics().then(() => 'scraped'), 'scraped');

            if (byTopic.has(paused)) assert.deepEqual(await q.reserve(paused, { max: 10, waitMs: 0 }), [], `${paused} is paused`);
            await q.topics.resume(paused);
            for (const [topic, of] of byTopic) assert.deepEqual(await drain(q, topic, of, 15_000), [...of].sort(), `deliveries of ${topic}`);
            assert.equal((await q.stats()).counts.completed, ids.length);
            await registry.metrics();
            assert.ok(prototypeIntact(), 'Object.prototype was written');
          } finally {
            await q.close();
            await drop();
          }
        }),
        { numRuns: kind.runs },
      );
    });
  });
}
